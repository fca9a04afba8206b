// cove_query, cove_results_* and cove_object_get_backlinks: live, lazy query results over the
// engine's Results (Results/Results.swift). A function that makes results runs them once before it
// returns, so that a query that names an unknown property fails there, as its syntax errors do,
// and not at the first read.
import CCove
import Cove
#if canImport(Glibc)
import Glibc
#endif

// MARK: Checks and helpers

private func resultsHandle(_ p: OpaquePointer?, _ name: StaticString = "results", in function: StaticString) throws(CFailure) -> ResultsHandle {
    try handle(p, ResultsHandle.self, name, in: function)
}

/// The query arguments a caller passed, `$0` to `$(n-1)`, each checked as any value is.
func queryArguments(_ args: UnsafePointer<cove_value_t>?, _ n: Int, in function: StaticString) throws(CFailure) -> [QueryArgument] {
    // size_t arrives as Int: a count above Int.max arrives negative.
    guard n >= 0 else { throw invalidArgument(function, "n_args \(UInt(bitPattern: n)) is too large") }
    if n > 0 && args == nil { throw invalidArgument(function, "args is NULL with n_args \(n)") }
    var arguments: [QueryArgument] = []
    arguments.reserveCapacity(n)
    for i in 0..<n {
        do throws(CFailure) {
            arguments.append(.value(try ValueBridge.value(args.map { $0 + i }, "argument", in: function)))
        } catch {
            throw rewordedFailure(error, function, "args[\(i)] ($\(i))")
        }
    }
    return arguments
}

/// An index argument: size_t arrives as Int, so one above Int.max arrives negative and is out of
/// range of any results; its message shows the number the caller passed.
func position(_ index: Int, _ name: StaticString, in function: StaticString) throws(CFailure) -> Int {
    guard index >= 0 else {
        throw failure(Int32(COVE_ERR_OUT_OF_RANGE), "\(function): \(name) \(UInt(bitPattern: index)) is out of range")
    }
    return index
}

/// An optional property name: NULL means the elements themselves.
private func optionalString(_ pointer: UnsafePointer<CChar>?, _ name: StaticString, in function: StaticString) throws(CFailure) -> String? {
    guard pointer != nil else { return nil }
    return try string(pointer, name, in: function)
}

/// `results`, or the error it was made with (the C functions report it when they make them).
private func checked<E>(_ results: Results<E>) throws(CoveError) -> Results<E> {
    if let failure = results.queryError { throw failure }
    return results
}

/// What the engine operations need, whichever Swift type the results have.
extension ResultsHandle.Contents {
    var realm: Realm {
        switch self {
        case .objects(let r): r.sourceRealm
        case .elements(let r): r.sourceRealm
        }
    }

    func count() throws(CoveError) -> Int {
        switch self {
        case .objects(let r): try r.checkedCount()
        case .elements(let r): try r.checkedCount()
        }
    }

    func filter(_ query: String, _ arguments: [QueryArgument]) throws(CoveError) -> Self {
        switch self {
        case .objects(let r): .objects(try r.filter(query, arguments: arguments))
        case .elements(let r): .elements(try r.filter(query, arguments: arguments))
        }
    }

    func sorted(_ keyPath: String, ascending: Bool) throws(CoveError) -> Self {
        switch self {
        case .objects(let r): .objects(try checked(r.sorted(byKeyPath: keyPath, ascending: ascending)))
        case .elements(let r): .elements(try checked(r.sorted(byKeyPath: keyPath, ascending: ascending)))
        }
    }

    func distinct(_ keyPath: String) throws(CoveError) -> Self {
        switch self {
        case .objects(let r): .objects(try checked(r.distinct(by: [keyPath])))
        case .elements(let r): .elements(try checked(r.distinct(by: [keyPath])))
        }
    }

    /// The element at `index`: a link for an object.
    func value(at index: Int) throws(CoveError) -> Value {
        switch self {
        case .objects(let r): .link(try r.element(at: index).link)
        case .elements(let r): try r.element(at: index)
        }
    }

    /// The object at `index` of results of objects, or nil when it was deleted since: made
    /// once, where going through its link would look it up twice.
    func object(at index: Int) throws(CoveError) -> DynamicObject? {
        switch self {
        case .objects(let r):
            do { return try r.element(at: index) } catch {
                if error.code == .invalidated { return nil }
                throw error
            }
        case .elements(let r):
            guard case .link(let link) = try r.element(at: index) else { return nil }
            return try realm.object(for: link)
        }
    }

    func objectKeys(from start: Int, count: Int) throws(CoveError) -> [Int64] {
        switch self {
        case .objects(let r): try r.objectKeys(from: start, count: count)
        case .elements(let r): try r.objectKeys(from: start, count: count)
        }
    }

    func min(_ property: String?) throws(CoveError) -> Value? {
        switch self {
        case .objects(let r): try r.min(ofProperty: property)
        case .elements(let r): try r.min(ofProperty: property)
        }
    }

    func max(_ property: String?) throws(CoveError) -> Value? {
        switch self {
        case .objects(let r): try r.max(ofProperty: property)
        case .elements(let r): try r.max(ofProperty: property)
        }
    }

    func sum(_ property: String?) throws(CoveError) -> Value {
        switch self {
        case .objects(let r): try r.sum(ofProperty: property)
        case .elements(let r): try r.sum(ofProperty: property)
        }
    }

    func average(_ property: String?) throws(CoveError) -> Value? {
        switch self {
        case .objects(let r): try r.average(ofProperty: property)
        case .elements(let r): try r.average(ofProperty: property)
        }
    }

    func jsonText() throws(CoveError) -> String {
        switch self {
        case .objects(let r): try r.jsonText()
        case .elements(let r): try r.jsonText()
        }
    }

    func explain() throws(CoveError) -> String {
        switch self {
        case .objects(let r): try r.explain()
        case .elements(let r): try r.explain()
        }
    }

    func freeze() throws(CoveError) -> Self {
        switch self {
        case .objects(let r): .objects(try r.checkedFreeze())
        case .elements(let r): .elements(try r.checkedFreeze())
        }
    }

    func thaw(in live: Realm) throws(CoveError) -> Self {
        switch self {
        case .objects(let r): .objects(try r.thaw(in: live))
        case .elements(let r): .elements(try r.thaw(in: live))
        }
    }
}

extension ResultsHandle {
    /// Runs an engine read under the handle's lock, its error recorded as this thread's message.
    func read<R>(_ body: (Contents) throws(CoveError) -> R) throws(CFailure) -> R {
        try lock.locked { () throws(CFailure) -> R in
            try call { () throws(CoveError) -> R in try body(contents) }
        }
    }

    /// "list 'tags' of class 'Person' (string[])" or "objects of a class", for messages.
    var elementsLabel: String {
        guard let source else { return "objects" }
        return "the elements of \(source.label) (\(source.property.typeNotation))"
    }
}

/// Hands out new results made from `contents`, after running them once (so that every error of
/// the query shows here); `out` gets them (+1).
private func handOut(_ contents: ResultsHandle.Contents, of realm: RealmHandle, source: ResultsHandle.CollectionSource?,
                     to out: UnsafeMutablePointer<OpaquePointer?>) throws(CFailure) {
    let made = ResultsHandle(realm, contents, source: source)
    _ = try made.read { (c) throws(CoveError) in try c.count() }
    out.pointee = made.retainedPointer()
}

// MARK: Making results

@c @implementation
public func cove_query(_ realm: OpaquePointer?, _ className: UnsafePointer<CChar>?, _ rql: UnsafePointer<CChar>?,
                       _ args: UnsafePointer<cove_value_t>?, _ nArgs: Int, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    let function: StaticString = "cove_query"
    return entry { () throws(CFailure) in
        let out = try required(out, "out", in: function)
        let h = try realmHandle(realm, in: function)
        let name = try string(className, "class_name", in: function)
        let text = try string(rql, "rql", in: function)
        let arguments = try queryArguments(args, nArgs, in: function)
        let results = try call { () throws(CoveError) in try h.realm.objects(name).filter(text, arguments: arguments) }
        try handOut(.objects(results), of: h, source: nil, to: out)
    }
}

@c @implementation
public func cove_results_filter(_ results: OpaquePointer?, _ rql: UnsafePointer<CChar>?, _ args: UnsafePointer<cove_value_t>?,
                                _ nArgs: Int, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    let function: StaticString = "cove_results_filter"
    return entry { () throws(CFailure) in
        let out = try required(out, "out", in: function)
        let r = try resultsHandle(results, in: function)
        let text = try string(rql, "rql", in: function)
        let arguments = try queryArguments(args, nArgs, in: function)
        let filtered = try call { () throws(CoveError) in try r.contents.filter(text, arguments) }
        try handOut(filtered, of: r.realmHandle, source: r.source, to: out)
    }
}

@c @implementation
public func cove_results_sort(_ results: OpaquePointer?, _ keyPath: UnsafePointer<CChar>?, _ ascending: Bool,
                              _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    let function: StaticString = "cove_results_sort"
    return entry { () throws(CFailure) in
        let out = try required(out, "out", in: function)
        let r = try resultsHandle(results, in: function)
        let path = try string(keyPath, "key_path", in: function)
        let sorted = try call { () throws(CoveError) in try r.contents.sorted(path, ascending: ascending) }
        try handOut(sorted, of: r.realmHandle, source: r.source, to: out)
    }
}

@c @implementation
public func cove_results_distinct(_ results: OpaquePointer?, _ keyPath: UnsafePointer<CChar>?,
                                  _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    let function: StaticString = "cove_results_distinct"
    return entry { () throws(CFailure) in
        let out = try required(out, "out", in: function)
        let r = try resultsHandle(results, in: function)
        let path = try string(keyPath, "key_path", in: function)
        let distinct = try call { () throws(CoveError) in try r.contents.distinct(path) }
        try handOut(distinct, of: r.realmHandle, source: r.source, to: out)
    }
}

/// Results over a list's or set's elements, refused (rather than failing at the first read)
/// when the realm is closed or the owner deleted.
func collectionResults(_ collection: DynamicCollection, _ results: Results<Value>, of realm: RealmHandle,
                               to out: UnsafeMutablePointer<OpaquePointer?>, in function: StaticString) throws(CFailure) {
    try requireOpen(collection.realm, in: function)
    let source = ResultsHandle.CollectionSource(collection)
    if collection.isInvalidated {
        throw failure(Int32(COVE_ERR_INVALIDATED), "\(function): the \(source.ownerClass) object \(source.ownerKey) that owns \(source.label) was deleted")
    }
    out.pointee = ResultsHandle(realm, .elements(results), source: source).retainedPointer()
}

@c @implementation
public func cove_list_as_results(_ list: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: "cove_list_as_results")
        let l = try handle(list, ListHandle.self, "list", in: "cove_list_as_results")
        try collectionResults(l.list, l.list.asResults(), of: l.realmHandle, to: out, in: "cove_list_as_results")
    }
}

@c @implementation
public func cove_set_as_results(_ set: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: "cove_set_as_results")
        let s = try handle(set, SetHandle.self, "set", in: "cove_set_as_results")
        try collectionResults(s.set, s.set.asResults(), of: s.realmHandle, to: out, in: "cove_set_as_results")
    }
}

// MARK: Reading

@c @implementation
public func cove_results_count(_ results: OpaquePointer?, _ out: UnsafeMutablePointer<Int>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: "cove_results_count")
        let r = try resultsHandle(results, in: "cove_results_count")
        out.pointee = try r.read { (c) throws(CoveError) in try c.count() }
    }
}

@c @implementation
public func cove_results_get_object(_ results: OpaquePointer?, _ index: Int, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    let function: StaticString = "cove_results_get_object"
    return entry { () throws(CFailure) in
        let out = try required(out, "out", in: function)
        let r = try resultsHandle(results, in: function)
        let i = try position(index, "index", in: function)
        guard r.holdsObjects else {
            throw failure(Int32(COVE_ERR_WRONG_TYPE), "\(function): the results hold \(r.elementsLabel), not objects: read them with cove_results_get_value()")
        }
        let object = try r.read { (c) throws(CoveError) -> DynamicObject? in try c.object(at: i) }
        guard let object else {
            throw failure(Int32(COVE_ERR_INVALIDATED), "\(function): the object at index \(i) was deleted")
        }
        give(object, of: r.realmHandle, to: out)
    }
}

@c @implementation
public func cove_results_get_value(_ results: OpaquePointer?, _ index: Int, _ out: UnsafeMutablePointer<cove_value_t>?) -> cove_status_t {
    let function: StaticString = "cove_results_get_value"
    return entry { () throws(CFailure) in
        let out = try required(out, "out", in: function)
        let r = try resultsHandle(results, in: function)
        let i = try position(index, "index", in: function)
        let value = try r.read { (c) throws(CoveError) in try c.value(at: i) }
        ValueBridge.write(value, to: out, realm: r.realmHandle)
    }
}

@c @implementation
public func cove_results_get_keys(_ results: OpaquePointer?, _ start: Int, _ count: Int, _ outKeys: UnsafeMutablePointer<Int64>?,
                                  _ outN: UnsafeMutablePointer<Int>?) -> cove_status_t {
    let function: StaticString = "cove_results_get_keys"
    return entry { () throws(CFailure) in
        let outN = try required(outN, "out_n", in: function)
        let r = try resultsHandle(results, in: function)
        let first = try position(start, "start", in: function)
        // A capacity above Int.max arrives negative; no results are that long.
        let capacity = count < 0 ? Int.max : count
        if capacity > 0 && outKeys == nil { throw invalidArgument(function, "out_keys is NULL with count \(capacity)") }
        guard r.holdsObjects else {
            throw failure(Int32(COVE_ERR_WRONG_TYPE), "\(function): the results hold \(r.elementsLabel), which have no object keys")
        }
        let keys = try r.read { (c) throws(CoveError) in try c.objectKeys(from: first, count: capacity) }
        if let outKeys { outKeys.update(from: keys, count: keys.count) }
        outN.pointee = keys.count
    }
}

// MARK: Aggregates

/// An aggregate that may find nothing: `out` gets the value (NULL when there is none) and
/// `outFound` whether there was one.
private func aggregate(_ results: OpaquePointer?, _ property: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<cove_value_t>?,
                       _ outFound: UnsafeMutablePointer<Bool>?, in function: StaticString,
                       _ body: (ResultsHandle.Contents, String?) throws(CoveError) -> Value?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: function)
        let found = try required(outFound, "out_found", in: function)
        let r = try resultsHandle(results, in: function)
        let name = try optionalString(property, "property", in: function)
        let value = try r.read { (c) throws(CoveError) in try body(c, name) }
        ValueBridge.write(value ?? .null, to: out, realm: r.realmHandle)
        found.pointee = value != nil
    }
}

@c @implementation
public func cove_results_min(_ results: OpaquePointer?, _ property: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<cove_value_t>?,
                             _ outFound: UnsafeMutablePointer<Bool>?) -> cove_status_t {
    aggregate(results, property, out, outFound, in: "cove_results_min") { (c, p) throws(CoveError) in try c.min(p) }
}

@c @implementation
public func cove_results_max(_ results: OpaquePointer?, _ property: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<cove_value_t>?,
                             _ outFound: UnsafeMutablePointer<Bool>?) -> cove_status_t {
    aggregate(results, property, out, outFound, in: "cove_results_max") { (c, p) throws(CoveError) in try c.max(p) }
}

@c @implementation
public func cove_results_sum(_ results: OpaquePointer?, _ property: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<cove_value_t>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: "cove_results_sum")
        let r = try resultsHandle(results, in: "cove_results_sum")
        let name = try optionalString(property, "property", in: "cove_results_sum")
        let value = try r.read { (c) throws(CoveError) in try c.sum(name) }
        ValueBridge.write(value, to: out, realm: r.realmHandle)
    }
}

@c @implementation
public func cove_results_average(_ results: OpaquePointer?, _ property: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<cove_value_t>?,
                                 _ outFound: UnsafeMutablePointer<Bool>?) -> cove_status_t {
    aggregate(results, property, out, outFound, in: "cove_results_average") { (c, p) throws(CoveError) in try c.average(p) }
}

// MARK: Freezing

@c @implementation
public func cove_results_freeze(_ results: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    let function: StaticString = "cove_results_freeze"
    return entry { () throws(CFailure) in
        let out = try required(out, "out", in: function)
        let r = try resultsHandle(results, in: function)
        if r.realmHandle.realm.isFrozen {
            out.pointee = r.retainedPointer()
            return
        }
        // The engine freezes the realm; the realm handle made here closes that frozen realm
        // (unpinning its version) when the last results made from it goes.
        // Not run again: the query ran on this version already (a list's deleted owner fails
        // the freeze itself).
        let frozen = try call { () throws(CoveError) in try r.contents.freeze() }
        out.pointee = ResultsHandle(RealmHandle(frozen.realm), frozen, source: r.source).retainedPointer()
    }
}

@c @implementation
public func cove_results_thaw(_ frozen: OpaquePointer?, _ live: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    let function: StaticString = "cove_results_thaw"
    return entry { () throws(CFailure) in
        let out = try required(out, "out", in: function)
        let r = try resultsHandle(frozen, "frozen", in: function)
        let l = try handle(live, RealmHandle.self, "live", in: function)
        if l.realm.isFrozen { throw invalidArgument(function, "live is a frozen realm: results thaw into a live one") }
        let thawed: ResultsHandle.Contents
        do throws(CoveError) {
            thawed = try r.contents.thaw(in: l.realm)
        } catch let error where error.code == .invalidated {
            // The list's or set's owner is gone from the live realm: nothing to thaw, as
            // cove_object_thaw() answers for a deleted object.
            out.pointee = nil
            return
        } catch {
            throw failure(error.code.rawValue, error.message)
        }
        try handOut(thawed, of: l, source: r.source, to: out)
    }
}

@c @implementation
public func cove_results_is_valid(_ results: OpaquePointer?, _ out: UnsafeMutablePointer<Bool>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: "cove_results_is_valid")
        let r = try handle(results, ResultsHandle.self, "results", in: "cove_results_is_valid", closedAllowed: true)
        let realm = r.realmHandle.realm
        if realm.isClosed {
            out.pointee = false
        } else if let source = r.source {
            out.pointee = (try? realm.dynamicObject(ofType: source.ownerClass, objectKey: source.ownerKey)) != nil
        } else {
            out.pointee = true
        }
    }
}

// MARK: Export and plan

@c @implementation
public func cove_results_to_json(_ results: OpaquePointer?, _ outJson: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(outJson, "out_json", in: "cove_results_to_json")
        let r = try resultsHandle(results, in: "cove_results_to_json")
        let text = try r.read { (c) throws(CoveError) in try c.jsonText() }
        out.pointee = strdup(text)
    }
}

@c @implementation
public func cove_results_explain(_ results: OpaquePointer?, _ outText: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(outText, "out_text", in: "cove_results_explain")
        let r = try resultsHandle(results, in: "cove_results_explain")
        let text = try r.read { (c) throws(CoveError) in try c.explain() }
        out.pointee = strdup(text)
    }
}

// MARK: Backlinks

@c @implementation
public func cove_object_get_backlinks(_ object: OpaquePointer?, _ property: UnsafePointer<CChar>?,
                                      _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    let function: StaticString = "cove_object_get_backlinks"
    return entry { () throws(CFailure) in
        let out = try required(out, "out", in: function)
        let o = try objectHandle(object, in: function)
        let name = try string(property, "property", in: function)
        let realm = o.realmHandle.realm
        let cls = o.object.objectSchema
        guard let p = cls[property: name] else {
            throw failure(Int32(COVE_ERR_NOT_FOUND), "\(function): class '\(cls.className)' has no property '\(name)'")
        }
        guard case .linkingObjects(let sourceClass, let sourceName) = p.type else {
            throw failure(Int32(COVE_ERR_WRONG_TYPE), "\(function): property '\(name)' of class '\(cls.className)' is \(p.typeNotation), not backlinks (@links(Class.property))")
        }
        if o.object.isInvalidated {
            throw failure(Int32(COVE_ERR_INVALIDATED), "\(function): the \(cls.className) object \(o.object.objectKey) was deleted")
        }
        guard realm.schema[sourceClass]?[property: sourceName] != nil else {
            throw failure(Int32(COVE_ERR_INTERNAL), "\(function): backlinks '\(name)' of class '\(cls.className)' come from '\(sourceClass).\(sourceName)', which the schema lacks")
        }
        // One row per link: an object whose list holds this one twice is there twice.
        let results = try call { () throws(CoveError) in try o.object.linkingObjectsResults(name) }
        try handOut(.objects(results), of: o.realmHandle, source: nil, to: out)
    }
}
