// cove_results_sectioned, cove_results_sectioned_by, cove_sectioned_*, cove_section_* and their
// observation: the engine's SectionedResults (Results/SectionedResults.swift) for C. A C key callback
// is called through a closure that holds it weakly; the handles and tokens that use it hold it,
// and the last of them to go frees its user data.
import CCove
import Cove
#if canImport(Glibc)
import Glibc
#endif

// MARK: Key callbacks

/// A C section key callback with its user data (CCallback's ownership rules):
/// `free_userdata` runs exactly once, when the last sectioned results, section, frozen copy or
/// token that uses the callback is released; `disarm()` leaves it to the caller when the
/// sectioned results could not be made.
typealias SectionKeyCallback = CCallback<cove_section_key_fn>

extension CCallback where Function == cove_section_key_fn {
    /// Whether the callback is running on the calling thread (the thread's chain of running key
    /// callbacks holds it).
    var isRunningOnThisThread: Bool {
        let me = Unmanaged.passUnretained(self).toOpaque()
        var node = pthread_getspecific(runningKeyCallbacks)
        while let n = node {
            let running = n.assumingMemoryBound(to: RunningKeyCallback.self).pointee
            if running.callback == me { return true }
            node = running.outer
        }
        return false
    }

    /// The section key of `object`, as the callback says; the object is lent to it as a handle of
    /// `realm`, valid for the call (the callback may retain it).
    /// - Throws: `.callback` when the callback returns a status other than COVE_OK or a key that
    ///   is not a valid value.
    func key(of object: DynamicObject, lentFrom realm: RealmHandle) throws(CoveError) -> Value {
        let lent = ObjectHandle(realm, object)
        var out = cove_value_t()
        let outer = pthread_getspecific(runningKeyCallbacks)
        var node = RunningKeyCallback(callback: Unmanaged.passUnretained(self).toOpaque(), outer: outer)
        let status = withUnsafeMutablePointer(to: &node) { p -> cove_status_t in
            _ = pthread_setspecific(runningKeyCallbacks, p)
            defer { _ = pthread_setspecific(runningKeyCallbacks, outer) }
            return withExtendedLifetime(lent) { function(userdata, lent.borrowedPointer(), &out) }
        }
        let cls = object.objectSchema.className
        guard status == cove_status_t(COVE_OK) else {
            let name = CoveError.Code(rawValue: status)?.statusName ?? "status \(status)"
            throw CoveError(.callback, "the section key callback returned \(name) for the \(cls) object \(object.objectKey)")
        }
        do throws(CFailure) {
            return try ValueBridge.value(&out, "out_key", in: "the section key callback")
        } catch {
            throw CoveError(.callback, "\(currentErrorMessage()) (for the \(cls) object \(object.objectKey))")
        }
    }
}

/// One key callback running on this thread: a node on the calling frame's stack, linked to the
/// one running around it. Reading sectioned results from inside their own key callback is
/// refused by walking these, rather than keying the rows again without end.
private struct RunningKeyCallback {
    let callback: UnsafeMutableRawPointer
    let outer: UnsafeMutableRawPointer?
}

/// The innermost RunningKeyCallback of each thread.
private let runningKeyCallbacks: pthread_key_t = {
    var key = pthread_key_t()
    _ = pthread_key_create(&key, nil)
    return key
}()

/// This thread's last error message (what a ValueBridge check just recorded).
private func currentErrorMessage() -> String {
    guard let p = pthread_getspecific(errorMessageKey) else { return "" }
    return String(cString: p.assumingMemoryBound(to: CChar.self))
}

// MARK: Engine calls

/// Runs a call of the engine's sectioned results, whose API throws untyped errors, as a CoveError.
private func engineCall<R>(_ body: () throws -> R) throws(CoveError) -> R {
    do {
        return try body()
    } catch let error as CoveError {
        throw error
    } catch {
        throw CoveError(.internal, "\(error)")
    }
}

extension SectionedHandle {
    /// Cuts `base` into sections as `sectioning` says. A key callback's objects are lent as
    /// handles of `realm`, which the closure holds weakly: the engine's observers keep it, and
    /// the realm must not keep itself open through them.
    static func cut(_ base: ResultsHandle.Contents, _ sectioning: Sectioning, lendingFrom realm: RealmHandle) throws(CoveError) -> Contents {
        switch sectioning {
        case .keyPath(let path, let ascending):
            switch base {
            case .objects(let r): return .objects(try r.sectioned(by: path, ascending: ascending))
            case .elements(let r): return .elements(try r.sectioned(by: path, ascending: ascending))
            }
        case .callback(let callback):
            // No sort: rows keep the results' own order; sections go in ascending key order.
            switch base {
            case .objects(let r):
                return .objects(try r.sectioned(sortDescriptors: []) { [weak callback, weak realm] (object: DynamicObject) throws -> Value in
                    guard let callback, let realm else { throw SectionedHandle.released }
                    return try callback.key(of: object, lentFrom: realm)
                })
            case .elements(let r):
                return .elements(try r.sectioned(sortDescriptors: []) { [weak callback, weak realm] (element: Value) throws -> Value in
                    guard let callback, let realm else { throw SectionedHandle.released }
                    guard case .link(let link) = element, let object = try realm.realm.object(for: link) else {
                        throw CoveError(.invalidated, "a row of the sectioned results was deleted while they were read")
                    }
                    return try callback.key(of: object, lentFrom: realm)
                })
            }
        }
    }

    /// What a key closure finds once every handle and token using it is gone; the engine calls
    /// no closure then (its observers were invalidated with their tokens).
    fileprivate static var released: CoveError {
        CoveError(.invalidated, "the sectioned results and every token observing them were released")
    }

    /// The C key callback, when the rows are keyed by one.
    var keyCallback: SectionKeyCallback? {
        if case .callback(let c) = sectioning { return c }
        return nil
    }

    /// Refuses a call from inside this handle's own key callback: it would key the rows again,
    /// and again from inside that.
    func refuseInsideOwnKeyCallback(in function: StaticString) throws(CFailure) {
        if let c = keyCallback, c.isRunningOnThisThread {
            throw invalidArgument(function, "called from inside the section key callback of these sectioned results, which would key them again")
        }
    }

    /// The sections now: keys in order, rows as links (the engine cuts them once per version,
    /// and again after each change inside a write).
    func sections(in function: StaticString) throws(CFailure) -> Sections {
        try read(in: function) { try $0.sectionRows() }
    }

    /// The rows of the section of `key` now (empty when there is none).
    func rows(ofKey key: Value, in function: StaticString) throws(CFailure) -> [Value] {
        try read(in: function) { try $0.rows(ofKey: key) ?? [] }
    }

    /// `body` over the engine's sectioned results, whichever their element type, with the
    /// checks every section read makes first.
    private func read<R>(in function: StaticString, _ body: (any SectionRowReading) throws -> R) throws(CFailure) -> R {
        try refuseInsideOwnKeyCallback(in: function)
        try requireOpen(in: function)
        let source: any SectionRowReading
        switch contents {
        case .objects(let s): source = s
        case .elements(let s): source = s
        }
        return try call { () throws(CoveError) -> R in try engineCall { () throws -> R in try body(source) } }
    }
}

/// What the section functions read of sectioned results of either element type.
protocol SectionRowReading {
    func sectionRows() throws -> [(key: Value, rows: [Value])]
    func rows(ofKey key: Value) throws -> [Value]?
}

extension SectionedResults: SectionRowReading {}

// MARK: Checks and helpers

private func sectionedHandle(_ p: OpaquePointer?, in function: StaticString) throws(CFailure) -> SectionedHandle {
    try handle(p, SectionedHandle.self, "sectioned", in: function)
}

private func sectionHandle(_ p: OpaquePointer?, in function: StaticString) throws(CFailure) -> SectionHandle {
    try handle(p, SectionHandle.self, "section", in: function)
}

/// Sections of `r` as `sectioning` says; refused for results of values (sections hold objects).
private func sectioned(_ r: ResultsHandle, _ sectioning: SectionedHandle.Sectioning, in function: StaticString) throws(CFailure) -> SectionedHandle {
    guard r.holdsObjects else {
        throw failure(Int32(COVE_ERR_WRONG_TYPE), "\(function): the results hold \(r.elementsLabel): sections are cut from results of objects")
    }
    let contents = try call { () throws(CoveError) in try SectionedHandle.cut(r.contents, sectioning, lendingFrom: r.realmHandle) }
    return SectionedHandle(r.realmHandle, contents, base: r.contents, sectioning: sectioning)
}

/// Calls a sectioned callback with a change object lent for the call. After an error nothing
/// more is delivered: the observation is over, as for every other observer (the engine would
/// go on with later commits).
private func sectionedBlock(_ box: CCallback<cove_sectioned_cb>) -> (SectionedChange) -> Void {
    var stopped = false
    return { [weak box] change in
        guard let box, !stopped else { return }
        if case .error = change { stopped = true }
        let changes = SectionedChangesHandle(change)
        withExtendedLifetime((box, changes)) { box.function(box.userdata, changes.borrowedPointer()) }
        changes.end()
    }
}

// MARK: Making sectioned results

@c @implementation
public func cove_results_sectioned(_ results: OpaquePointer?, _ keyPath: UnsafePointer<CChar>?, _ ascending: Bool,
                                   _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    let function: StaticString = "cove_results_sectioned"
    return entry { () throws(CFailure) in
        let out = try required(out, "out", in: function)
        let r = try handle(results, ResultsHandle.self, "results", in: function)
        let path = try string(keyPath, "key_path", in: function)
        let made = try sectioned(r, .keyPath(path, ascending: ascending), in: function)
        // Read once, so that an error of the query shows here rather than at the first read.
        _ = try made.sections(in: function)
        out.pointee = made.retainedPointer()
    }
}

@c @implementation
public func cove_results_sectioned_by(_ results: OpaquePointer?, _ keyFunction: cove_section_key_fn?, _ userdata: UnsafeMutableRawPointer?,
                                      _ freeUserdata: cove_free_fn?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    let function: StaticString = "cove_results_sectioned_by"
    return entry { () throws(CFailure) in
        let out = try required(out, "out", in: function)
        let r = try handle(results, ResultsHandle.self, "results", in: function)
        guard let keyFunction else { throw invalidArgument(function, "key_fn is NULL") }
        let callback = SectionKeyCallback(keyFunction, userdata, freeUserdata)
        do throws(CFailure) {
            // Not read here: the callback runs at the first read, on the thread that reads.
            out.pointee = try sectioned(r, .callback(callback), in: function).retainedPointer()
        } catch {
            callback.disarm()
            throw error
        }
    }
}

// MARK: Reading

@c @implementation
public func cove_sectioned_count(_ sectioned: OpaquePointer?, _ out: UnsafeMutablePointer<Int>?) -> cove_status_t {
    let function: StaticString = "cove_sectioned_count"
    return entry { () throws(CFailure) in
        let out = try required(out, "out", in: function)
        let s = try sectionedHandle(sectioned, in: function)
        out.pointee = try s.sections(in: function).count
    }
}

@c @implementation
public func cove_sectioned_get_section(_ sectioned: OpaquePointer?, _ index: Int, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    let function: StaticString = "cove_sectioned_get_section"
    return entry { () throws(CFailure) in
        let out = try required(out, "out", in: function)
        let s = try sectionedHandle(sectioned, in: function)
        let i = try position(index, "index", in: function)
        let count = try s.sections(in: function).count
        guard i < count else {
            throw failure(Int32(COVE_ERR_OUT_OF_RANGE), "\(function): index \(i) is out of range: the sectioned results have \(count) sections")
        }
        // The engine's section, for observing: it follows its key from now on.
        let contents = try call { () throws(CoveError) -> SectionHandle.Contents in
            try engineCall { () throws -> SectionHandle.Contents in
                switch s.contents {
                case .objects(let x): .objects(try x.section(at: i))
                case .elements(let x): .elements(try x.section(at: i))
                }
            }
        }
        let key: Value
        switch contents {
        case .objects(let x): key = x.key
        case .elements(let x): key = x.key
        }
        out.pointee = SectionHandle(s, key: key, contents).retainedPointer()
    }
}

@c @implementation
public func cove_section_key(_ section: OpaquePointer?, _ out: UnsafeMutablePointer<cove_value_t>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: "cove_section_key")
        let s = try sectionHandle(section, in: "cove_section_key")
        ValueBridge.write(s.key, to: out, realm: s.realmHandle)
    }
}

@c @implementation
public func cove_section_count(_ section: OpaquePointer?, _ out: UnsafeMutablePointer<Int>?) -> cove_status_t {
    let function: StaticString = "cove_section_count"
    return entry { () throws(CFailure) in
        let out = try required(out, "out", in: function)
        let s = try sectionHandle(section, in: function)
        out.pointee = try s.parent.rows(ofKey: s.key, in: function).count
    }
}

@c @implementation
public func cove_section_get_object(_ section: OpaquePointer?, _ index: Int, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    let function: StaticString = "cove_section_get_object"
    return entry { () throws(CFailure) in
        let out = try required(out, "out", in: function)
        let s = try sectionHandle(section, in: function)
        let i = try position(index, "index", in: function)
        let rows = try s.parent.rows(ofKey: s.key, in: function)
        guard i < rows.count else {
            throw failure(Int32(COVE_ERR_OUT_OF_RANGE), "\(function): index \(i) is out of range: the section of key \(s.key) has \(rows.count) objects")
        }
        let realm = s.realmHandle.realm
        guard case .link(let link) = rows[i],
              let object = try call({ () throws(CoveError) in try realm.object(for: link) }) else {
            throw failure(Int32(COVE_ERR_INVALIDATED), "\(function): the object at index \(i) was deleted")
        }
        give(object, of: s.realmHandle, to: out)
    }
}

// MARK: Freezing

@c @implementation
public func cove_sectioned_freeze(_ sectioned: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    let function: StaticString = "cove_sectioned_freeze"
    return entry { () throws(CFailure) in
        let out = try required(out, "out", in: function)
        let s = try sectionedHandle(sectioned, in: function)
        let realm = s.realmHandle.realm
        if realm.isFrozen {
            out.pointee = s.retainedPointer()
            return
        }
        // The results are frozen and cut again over the frozen realm (rather than through the
        // engine's SectionedResults.freeze(), whose key path closure keeps reading the live
        // realm): keys and rows then come from the same version. The realm handle made here
        // closes that frozen realm when the last handle made from it goes.
        let frozenBase = try call { () throws(CoveError) in try s.base.freeze() }
        let frozenRealm = RealmHandle(frozenBase.realm)
        let contents = try call { () throws(CoveError) in try SectionedHandle.cut(frozenBase, s.sectioning, lendingFrom: frozenRealm) }
        out.pointee = SectionedHandle(frozenRealm, contents, base: frozenBase, sectioning: s.sectioning).retainedPointer()
    }
}

// MARK: Observing

@c @implementation
public func cove_sectioned_observe(_ sectioned: OpaquePointer?, _ keyPathsArray: UnsafePointer<UnsafePointer<CChar>?>?, _ nKeyPaths: Int,
                                   _ callback: cove_sectioned_cb?, _ userdata: UnsafeMutableRawPointer?, _ freeUserdata: cove_free_fn?,
                                   _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    let function: StaticString = "cove_sectioned_observe"
    return entry { () throws(CFailure) in
        let out = try required(out, "out", in: function)
        let s = try sectionedHandle(sectioned, in: function)
        let paths = try keyPaths(keyPathsArray, nKeyPaths, in: function)
        guard let callback else { throw invalidArgument(function, "callback is NULL") }
        try requireObservable(s.realmHandle.realm, "sectioned results", in: function)
        let box = CCallback(callback, userdata, freeUserdata)
        let block = sectionedBlock(box)
        try register(box, of: s.realmHandle, to: out, keeping: s.keyCallback) { () throws(CoveError) in
            try engineCall { () throws -> NotificationToken in
                switch s.contents {
                case .objects(let x): try x.observeChanges(keyPaths: paths, block)
                case .elements(let x): try x.observeChanges(keyPaths: paths, block)
                }
            }
        }
    }
}

@c @implementation
public func cove_section_observe(_ section: OpaquePointer?, _ keyPathsArray: UnsafePointer<UnsafePointer<CChar>?>?, _ nKeyPaths: Int,
                                 _ callback: cove_sectioned_cb?, _ userdata: UnsafeMutableRawPointer?, _ freeUserdata: cove_free_fn?,
                                 _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    let function: StaticString = "cove_section_observe"
    return entry { () throws(CFailure) in
        let out = try required(out, "out", in: function)
        let s = try sectionHandle(section, in: function)
        let paths = try keyPaths(keyPathsArray, nKeyPaths, in: function)
        guard let callback else { throw invalidArgument(function, "callback is NULL") }
        try requireObservable(s.realmHandle.realm, "section", in: function)
        let box = CCallback(callback, userdata, freeUserdata)
        let block = sectionedBlock(box)
        try register(box, of: s.realmHandle, to: out, keeping: s.parent.keyCallback) { () throws(CoveError) in
            try engineCall { () throws -> NotificationToken in
                switch s.contents {
                case .objects(let x): try x.observeChanges(keyPaths: paths, block)
                case .elements(let x): try x.observeChanges(keyPaths: paths, block)
                }
            }
        }
    }
}
