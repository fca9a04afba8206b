// cove_projection_*: the engine's DynamicProjection (Results/DynamicProjection.swift) for C: names
// mapped onto key paths of a root object, read as single values, as the values a collection path
// reaches, or as live results of a list or set of the root, and observed under those names.
import CCove
import Cove

private func projectionHandle(_ p: OpaquePointer?, in function: StaticString) throws(CFailure) -> ProjectionHandle {
    try handle(p, ProjectionHandle.self, "projection", in: function)
}

/// `n` names or key paths a caller passed, each non-NULL, valid UTF-8 and not empty; nil for a
/// NULL array with `n` 0.
private func strings(_ array: UnsafePointer<UnsafePointer<CChar>?>?, _ n: Int, _ name: StaticString, count countName: StaticString,
                     in function: StaticString) throws(CFailure) -> [String]? {
    // size_t arrives as Int: a count above Int.max arrives negative.
    guard n >= 0 else { throw invalidArgument(function, "\(countName) \(UInt(bitPattern: n)) is too large") }
    guard let array else {
        if n > 0 { throw invalidArgument(function, "\(name) is NULL with \(countName) \(n)") }
        return nil
    }
    var out: [String] = []
    out.reserveCapacity(n)
    for i in 0..<n {
        guard let p = array[i] else { throw invalidArgument(function, "\(name)[\(i)] is NULL") }
        guard let s = String(validatingCString: p) else { throw invalidArgument(function, "\(name)[\(i)] is not valid UTF-8") }
        if s.isEmpty { throw invalidArgument(function, "\(name)[\(i)] is empty") }
        out.append(s)
    }
    return out
}

extension ProjectionHandle {
    /// The field projected as `name`.
    func field(_ name: String, in function: StaticString) throws(CFailure) -> DynamicProjection.Field {
        guard let f = projection.fields.first(where: { $0.name == name }) else {
            throw failure(Int32(COVE_ERR_NOT_FOUND), "\(function): the projection of \(projection.root.objectSchema.className) has no name '\(name)' (its names: \(names))")
        }
        return f
    }

    /// "name, friendNames", for messages.
    var names: String { projection.fields.map(\.name).joined(separator: ", ") }

    /// Refuses a read once the realm is closed or the root deleted.
    func requireReadable(in function: StaticString) throws(CFailure) {
        try requireOpen(in: function)
        let root = projection.root
        if root.isInvalidated {
            throw failure(Int32(COVE_ERR_INVALIDATED), "\(function): the projected \(root.objectSchema.className) object \(root.objectKey) was deleted")
        }
    }
}

// MARK: Making and reading

@c @implementation
public func cove_projection_new(_ root: OpaquePointer?, _ names: UnsafePointer<UnsafePointer<CChar>?>?, _ keyPaths: UnsafePointer<UnsafePointer<CChar>?>?,
                                _ n: Int, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    let function: StaticString = "cove_projection_new"
    return entry { () throws(CFailure) in
        let out = try required(out, "out", in: function)
        let o = try objectHandle(root, in: function)
        let nameList = try strings(names, n, "names", count: "n", in: function) ?? []
        let pathList = try strings(keyPaths, n, "key_paths", count: "n", in: function) ?? []
        let object = o.object
        if object.isInvalidated {
            throw failure(Int32(COVE_ERR_INVALIDATED), "\(function): the \(object.objectSchema.className) object \(object.objectKey) was deleted")
        }
        let fields = zip(nameList, pathList).map { DynamicProjection.Field($0, $1) }
        let projection = try call { () throws(CoveError) in try DynamicProjection(root: object, fields: fields) }
        out.pointee = ProjectionHandle(o.realmHandle, projection).retainedPointer()
    }
}

@c @implementation
public func cove_projection_get(_ projection: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<cove_value_t>?) -> cove_status_t {
    let function: StaticString = "cove_projection_get"
    return entry { () throws(CFailure) in
        let out = try required(out, "out", in: function)
        let p = try projectionHandle(projection, in: function)
        let n = try string(name, "name", in: function)
        let f = try p.field(n, in: function)
        try p.requireReadable(in: function)
        let value: Value
        do throws(CoveError) {
            value = try p.projection.value(n)
        } catch let error where error.code == .wrongType {
            throw failure(Int32(COVE_ERR_WRONG_TYPE), "\(function): projected name '\(n)' maps onto '\(f.keyPath)', which reaches a collection: read its values with cove_projection_get_values()")
        } catch {
            throw failure(error.code.rawValue, error.message)
        }
        ValueBridge.write(value, to: out, realm: p.realmHandle)
    }
}

@c @implementation
public func cove_projection_get_list(_ projection: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    let function: StaticString = "cove_projection_get_list"
    return entry { () throws(CFailure) in
        let out = try required(out, "out", in: function)
        let p = try projectionHandle(projection, in: function)
        let n = try string(name, "name", in: function)
        let f = try p.field(n, in: function)
        try p.requireReadable(in: function)
        let root = p.projection.root
        // A list or set of the root itself has live results; a path through one to other
        // values ("friends.firstName") has none in the engine.
        if !f.keyPath.contains("."), let property = root.objectSchema[property: f.keyPath] {
            switch property.collection {
            case .list:
                let list = try call { () throws(CoveError) in try root.dynamicList(f.keyPath) }
                try collectionResults(list, list.asResults(), of: p.realmHandle, to: out, in: function)
                return
            case .set:
                let set = try call { () throws(CoveError) in try root.dynamicMutableSet(f.keyPath) }
                try collectionResults(set, set.asResults(), of: p.realmHandle, to: out, in: function)
                return
            default:
                break
            }
        }
        let isOneValue: Bool
        do throws(CoveError) {
            _ = try p.projection.value(n)
            isOneValue = true
        } catch let error where error.code == .wrongType {
            isOneValue = false
        } catch {
            throw failure(error.code.rawValue, error.message)
        }
        if isOneValue {
            throw failure(Int32(COVE_ERR_WRONG_TYPE), "\(function): projected name '\(n)' maps onto '\(f.keyPath)', one value: read it with cove_projection_get()")
        }
        throw failure(Int32(COVE_ERR_WRONG_TYPE), "\(function): projected name '\(n)' maps onto '\(f.keyPath)', values that no live results hold (only a list or set of the root has them): read them with cove_projection_get_values()")
    }
}

@c @implementation
public func cove_projection_get_values(_ projection: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ outValues: UnsafeMutablePointer<cove_value_t>?,
                                       _ capacity: Int, _ outN: UnsafeMutablePointer<Int>?) -> cove_status_t {
    let function: StaticString = "cove_projection_get_values"
    return entry { () throws(CFailure) in
        let outN = try required(outN, "out_n", in: function)
        let p = try projectionHandle(projection, in: function)
        let n = try string(name, "name", in: function)
        // A capacity above Int.max arrives negative; no path reaches that many values.
        let room = capacity < 0 ? Int.max : capacity
        if room > 0 && outValues == nil { throw invalidArgument(function, "out_values is NULL with capacity \(room)") }
        _ = try p.field(n, in: function)
        try p.requireReadable(in: function)
        let values = try call { () throws(CoveError) in try p.projection.values(n) }
        if let outValues {
            for (i, v) in values.prefix(room).enumerated() { ValueBridge.write(v, to: outValues + i, realm: p.realmHandle) }
        }
        outN.pointee = values.count
    }
}

// MARK: Observing

@c @implementation
public func cove_projection_observe(_ projection: OpaquePointer?, _ namesArray: UnsafePointer<UnsafePointer<CChar>?>?, _ nNames: Int,
                                    _ callback: cove_object_cb?, _ userdata: UnsafeMutableRawPointer?, _ freeUserdata: cove_free_fn?,
                                    _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    let function: StaticString = "cove_projection_observe"
    return entry { () throws(CFailure) in
        let out = try required(out, "out", in: function)
        let p = try projectionHandle(projection, in: function)
        let names = try strings(namesArray, nNames, "names", count: "n_names", in: function)
        guard let callback else { throw invalidArgument(function, "callback is NULL") }
        let fields = p.projection.fields
        for (i, n) in (names ?? []).enumerated() where !fields.contains(where: { $0.name == n }) {
            throw invalidArgument(function, "names[\(i)] '\(n)' is not a name of the projection (its names: \(p.names))")
        }
        try requireObservable(p.realmHandle.realm, "projection", in: function)
        let root = p.projection.root
        if root.isInvalidated {
            throw failure(Int32(COVE_ERR_INVALIDATED), "\(function): the projected \(root.objectSchema.className) object \(root.objectKey) was deleted: it cannot be observed")
        }
        let withoutValues = Dictionary(fields.map { f in
            (f.name, "projected name '\(f.name)' maps onto '\(f.keyPath)', which reaches a collection: its change carries no values (read them with cove_projection_get_values())")
        }, uniquingKeysWith: { first, _ in first })
        let box = CCallback(callback, userdata, freeUserdata)
        let engineProjection = p.projection
        // The engine's projection holds itself weakly in its observer: the token keeps it.
        try register(box, of: p.realmHandle, to: out, keeping: engineProjection) { () throws(CoveError) in
            try engineProjection.observeChanges(names: names) { [weak box] change in
                guard let box else { return }
                let changes = ObjectChangesHandle(change) { withoutValues[$0] ?? "projected name '\($0)' carries no values" }
                withExtendedLifetime((box, changes)) { box.function(box.userdata, changes.borrowedPointer()) }
                changes.end()
            }
        }
    }
}
