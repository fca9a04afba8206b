// The change objects lent to notification callbacks (cove_collection_changes_t,
// cove_map_changes_t, cove_object_changes_t, cove_sectioned_changes_t) and their accessors. Each is built whole, in memory
// of its own, before its callback runs and emptied when the callback returns: one that a caller
// retained reads as empty afterwards (and its values as COVE_ERR_INVALIDATED), never as freed
// memory.
import CCove
import Cove
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The C memory a change object hands out, freed all at once when its callback returns.
struct LentMemory {
    private var blocks: [UnsafeMutableRawPointer] = []

    /// A copy of `values` (trivial types only: integers, cove_string_t, cove_value_t,
    /// cove_index_path_t); nil for none.
    mutating func array<T>(_ values: [T]) -> UnsafePointer<T>? {
        if values.isEmpty { return nil }
        let raw = UnsafeMutableRawPointer.allocate(byteCount: MemoryLayout<T>.stride * values.count,
                                                   alignment: MemoryLayout<T>.alignment)
        blocks.append(raw)
        let typed = raw.bindMemory(to: T.self, capacity: values.count)
        typed.initialize(from: values, count: values.count)
        return UnsafePointer(typed)
    }

    /// A NUL-terminated copy of `s`'s UTF-8 bytes.
    mutating func cString(_ s: String) -> UnsafePointer<CChar> {
        let bytes = Array(s.utf8CString)
        let raw = UnsafeMutableRawPointer.allocate(byteCount: bytes.count, alignment: 1)
        blocks.append(raw)
        let typed = raw.bindMemory(to: CChar.self, capacity: bytes.count)
        typed.initialize(from: bytes, count: bytes.count)
        return UnsafePointer(typed)
    }

    /// Keys as cove_string_t, their bytes NUL-terminated too (so a key can be passed back to
    /// cove_map_get()).
    mutating func strings(_ keys: [String]) -> UnsafePointer<cove_string_t>? {
        array(keys.map { cove_string_t(data: cString($0), size: $0.utf8.count) })
    }

    /// The bytes of a string or binary inside a value, as ValueBridge asks for them.
    mutating func keep(_ bytes: UnsafeRawBufferPointer) -> (UnsafeMutableRawPointer?, Int) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return (nil, 0) }
        let raw = UnsafeMutableRawPointer.allocate(byteCount: bytes.count, alignment: 1)
        blocks.append(raw)
        raw.copyMemory(from: base, byteCount: bytes.count)
        return (raw, bytes.count)
    }

    mutating func free() {
        for b in blocks { b.deallocate() }
        blocks.removeAll()
    }
}

/// An array a change object hands out: a pointer into its LentMemory and a count.
struct LentArray<T> {
    var pointer: UnsafePointer<T>?
    var count: Int

    static var empty: LentArray { LentArray(pointer: nil, count: 0) }

    init(pointer: UnsafePointer<T>?, count: Int) {
        self.pointer = pointer
        self.count = count
    }

    init(_ values: [T], in memory: inout LentMemory) {
        self.init(pointer: memory.array(values), count: values.count)
    }

    /// Hands the array out: `out` (may be NULL) gets the pointer, the caller the count.
    func give(to out: UnsafeMutablePointer<UnsafePointer<T>?>?) -> Int {
        out?.pointee = pointer
        return count
    }
}

/// What every change object shares: it is lent to one callback call and ends with it.
class LentChanges: Handle {
    var memory = LentMemory()
    /// False once the callback returned.
    private(set) var isLent = true
    /// Why the observation stopped, or nil.
    private(set) var error: UnsafePointer<CChar>?

    func record(_ error: CoveError) {
        self.error = memory.cString(error.message)
    }

    /// Frees what the change object handed out; called when its callback returns.
    func end() {
        isLent = false
        error = nil
        clear()
        memory.free()
    }

    /// Forgets the pointers into `memory` before it is freed.
    func clear() {}

    deinit { memory.free() }
}

/// A `cove_collection_changes_t`: what a results, list or set callback receives.
final class CollectionChangesHandle: LentChanges {
    override class var kindName: String { "cove_collection_changes_t" }
    private(set) var isInitial = false
    private(set) var cleared = false
    private(set) var rootDeleted = false
    private(set) var deletions = LentArray<Int>.empty
    private(set) var insertions = LentArray<Int>.empty
    private(set) var modifications = LentArray<Int>.empty
    private(set) var modificationsOld = LentArray<Int>.empty
    private(set) var movesFrom = LentArray<Int>.empty
    private(set) var movesTo = LentArray<Int>.empty

    init(_ change: CollectionChange) {
        super.init()
        switch change {
        case .initial:
            isInitial = true
        case .update(let c):
            cleared = c.cleared
            rootDeleted = c.ownerDeleted
            deletions = LentArray(c.deletions, in: &memory)
            insertions = LentArray(c.insertions, in: &memory)
            modifications = LentArray(c.modifications, in: &memory)
            modificationsOld = LentArray(c.modificationsOld, in: &memory)
            movesFrom = LentArray(c.moves.map(\.from), in: &memory)
            movesTo = LentArray(c.moves.map(\.to), in: &memory)
        case .error(let e):
            record(e)
        }
    }

    override func clear() {
        isInitial = false
        cleared = false
        rootDeleted = false
        deletions = .empty
        insertions = .empty
        modifications = .empty
        modificationsOld = .empty
        movesFrom = .empty
        movesTo = .empty
    }
}

/// A `cove_map_changes_t`: what a map callback receives, by key.
final class MapChangesHandle: LentChanges {
    override class var kindName: String { "cove_map_changes_t" }
    private(set) var isInitial = false
    private(set) var rootDeleted = false
    private(set) var deletions = LentArray<cove_string_t>.empty
    private(set) var insertions = LentArray<cove_string_t>.empty
    private(set) var modifications = LentArray<cove_string_t>.empty

    init(_ change: RealmMapChange) {
        super.init()
        switch change {
        case .initial:
            isInitial = true
        case .update(let c):
            rootDeleted = c.ownerDeleted
            deletions = LentArray(pointer: memory.strings(c.deletions), count: c.deletions.count)
            insertions = LentArray(pointer: memory.strings(c.insertions), count: c.insertions.count)
            modifications = LentArray(pointer: memory.strings(c.modifications), count: c.modifications.count)
        case .error(let e):
            record(e)
        }
    }

    override func clear() {
        isInitial = false
        rootDeleted = false
        deletions = .empty
        insertions = .empty
        modifications = .empty
    }
}

/// A `cove_object_changes_t`: what an object callback receives.
final class ObjectChangesHandle: LentChanges {
    override class var kindName: String { "cove_object_changes_t" }

    /// One changed property: its name, and its values before and after (nil for a collection
    /// property, whose change carries none).
    struct Entry {
        let name: UnsafePointer<CChar>
        /// Why a change without values has none, for the value accessors' message: "property
        /// 'tags' of class 'Person' is a list: ...".
        let withoutValues: String
        let old: cove_value_t?
        let new: cove_value_t?
    }

    private(set) var isDeleted = false
    private(set) var entries: [Entry] = []

    /// The changes of an object's own properties.
    convenience init<T>(_ change: ObjectChange<T>, of object: DynamicObject) {
        let cls = object.objectSchema
        self.init(change) { name in
            let kind = cls[property: name].map { $0.collection.rawValue } ?? "collection"
            return "property '\(name)' of class '\(cls.className)' is a \(kind): its change carries no values (read the collection from the object)"
        }
    }

    /// Changes under names of the caller's choosing (a projection's); `withoutValues` tells, for a
    /// name whose change carries no values, why.
    init<T>(_ change: ObjectChange<T>, withoutValues: (String) -> String) {
        super.init()
        switch change {
        case .change(_, let properties):
            entries = properties.map { p in
                Entry(name: memory.cString(p.name), withoutValues: withoutValues(p.name),
                      old: p.storedOldValue.map(lend), new: p.storedNewValue.map(lend))
            }
        case .deleted:
            isDeleted = true
        case .error(let e):
            record(e as? CoveError ?? CoveError(.internal, "\(e)"))
        }
    }

    private func lend(_ value: Value) -> cove_value_t {
        var out = cove_value_t()
        ValueBridge.write(value, to: &out) { memory.keep($0) }
        return out
    }

    override func clear() {
        isDeleted = false
        entries = []
    }
}

/// A `cove_sectioned_changes_t`: what a sectioned-results or section callback receives, by index
/// path.
final class SectionedChangesHandle: LentChanges {
    override class var kindName: String { "cove_sectioned_changes_t" }
    private(set) var isInitial = false
    private(set) var deletions = LentArray<cove_index_path_t>.empty
    private(set) var insertions = LentArray<cove_index_path_t>.empty
    private(set) var modifications = LentArray<cove_index_path_t>.empty
    private(set) var sectionsToInsert = LentArray<Int>.empty
    private(set) var sectionsToDelete = LentArray<Int>.empty

    init(_ change: SectionedChange) {
        super.init()
        switch change {
        case .initial:
            isInitial = true
        case .update(let c):
            deletions = LentArray(c.deletions.map(Self.indexPath), in: &memory)
            insertions = LentArray(c.insertions.map(Self.indexPath), in: &memory)
            modifications = LentArray(c.modifications.map(Self.indexPath), in: &memory)
            sectionsToInsert = LentArray(c.sectionsToInsert, in: &memory)
            sectionsToDelete = LentArray(c.sectionsToDelete, in: &memory)
        case .error(let e):
            record(e)
        }
    }

    private static func indexPath(_ p: IndexPath) -> cove_index_path_t {
        cove_index_path_t(section: p.section, row: p.row)
    }

    override func clear() {
        isInitial = false
        deletions = .empty
        insertions = .empty
        modifications = .empty
        sectionsToInsert = .empty
        sectionsToDelete = .empty
    }
}

// MARK: Accessors

/// The change object behind `p` while its callback runs; nil (with this thread's message set)
/// for NULL, another kind, or one whose callback returned.
private func lent<H: LentChanges>(_ p: OpaquePointer?, _ kind: H.Type, in function: StaticString) -> H? {
    guard let h = try? handle(p, kind, "changes", in: function) else { return nil }
    guard h.isLent else {
        _ = failure(Int32(COVE_ERR_INVALIDATED), "\(function): the \(H.kindName) is valid only during its callback")
        return nil
    }
    return h
}

@c @implementation
public func cove_changes_is_initial(_ changes: OpaquePointer?) -> Bool {
    lent(changes, CollectionChangesHandle.self, in: "cove_changes_is_initial")?.isInitial ?? false
}

@c @implementation
public func cove_changes_deletions(_ changes: OpaquePointer?, _ out: UnsafeMutablePointer<UnsafePointer<Int>?>?) -> Int {
    (lent(changes, CollectionChangesHandle.self, in: "cove_changes_deletions")?.deletions ?? .empty).give(to: out)
}

@c @implementation
public func cove_changes_insertions(_ changes: OpaquePointer?, _ out: UnsafeMutablePointer<UnsafePointer<Int>?>?) -> Int {
    (lent(changes, CollectionChangesHandle.self, in: "cove_changes_insertions")?.insertions ?? .empty).give(to: out)
}

@c @implementation
public func cove_changes_modifications(_ changes: OpaquePointer?, _ out: UnsafeMutablePointer<UnsafePointer<Int>?>?) -> Int {
    (lent(changes, CollectionChangesHandle.self, in: "cove_changes_modifications")?.modifications ?? .empty).give(to: out)
}

@c @implementation
public func cove_changes_modifications_old(_ changes: OpaquePointer?, _ out: UnsafeMutablePointer<UnsafePointer<Int>?>?) -> Int {
    (lent(changes, CollectionChangesHandle.self, in: "cove_changes_modifications_old")?.modificationsOld ?? .empty).give(to: out)
}

@c @implementation
public func cove_changes_moves(_ changes: OpaquePointer?, _ outFrom: UnsafeMutablePointer<UnsafePointer<Int>?>?,
                               _ outTo: UnsafeMutablePointer<UnsafePointer<Int>?>?) -> Int {
    let c = lent(changes, CollectionChangesHandle.self, in: "cove_changes_moves")
    _ = (c?.movesTo ?? .empty).give(to: outTo)
    return (c?.movesFrom ?? .empty).give(to: outFrom)
}

@c @implementation
public func cove_changes_cleared(_ changes: OpaquePointer?) -> Bool {
    lent(changes, CollectionChangesHandle.self, in: "cove_changes_cleared")?.cleared ?? false
}

@c @implementation
public func cove_changes_root_deleted(_ changes: OpaquePointer?) -> Bool {
    lent(changes, CollectionChangesHandle.self, in: "cove_changes_root_deleted")?.rootDeleted ?? false
}

@c @implementation
public func cove_changes_error(_ changes: OpaquePointer?) -> UnsafePointer<CChar>! {
    lent(changes, CollectionChangesHandle.self, in: "cove_changes_error")?.error
}

@c @implementation
public func cove_map_changes_is_initial(_ changes: OpaquePointer?) -> Bool {
    lent(changes, MapChangesHandle.self, in: "cove_map_changes_is_initial")?.isInitial ?? false
}

@c @implementation
public func cove_map_changes_deletions(_ changes: OpaquePointer?, _ out: UnsafeMutablePointer<UnsafePointer<cove_string_t>?>?) -> Int {
    (lent(changes, MapChangesHandle.self, in: "cove_map_changes_deletions")?.deletions ?? .empty).give(to: out)
}

@c @implementation
public func cove_map_changes_insertions(_ changes: OpaquePointer?, _ out: UnsafeMutablePointer<UnsafePointer<cove_string_t>?>?) -> Int {
    (lent(changes, MapChangesHandle.self, in: "cove_map_changes_insertions")?.insertions ?? .empty).give(to: out)
}

@c @implementation
public func cove_map_changes_modifications(_ changes: OpaquePointer?, _ out: UnsafeMutablePointer<UnsafePointer<cove_string_t>?>?) -> Int {
    (lent(changes, MapChangesHandle.self, in: "cove_map_changes_modifications")?.modifications ?? .empty).give(to: out)
}

@c @implementation
public func cove_map_changes_root_deleted(_ changes: OpaquePointer?) -> Bool {
    lent(changes, MapChangesHandle.self, in: "cove_map_changes_root_deleted")?.rootDeleted ?? false
}

@c @implementation
public func cove_map_changes_error(_ changes: OpaquePointer?) -> UnsafePointer<CChar>! {
    lent(changes, MapChangesHandle.self, in: "cove_map_changes_error")?.error
}

@c @implementation
public func cove_object_changes_is_deleted(_ changes: OpaquePointer?) -> Bool {
    lent(changes, ObjectChangesHandle.self, in: "cove_object_changes_is_deleted")?.isDeleted ?? false
}

@c @implementation
public func cove_object_changes_count(_ changes: OpaquePointer?) -> Int {
    lent(changes, ObjectChangesHandle.self, in: "cove_object_changes_count")?.entries.count ?? 0
}

@c @implementation
public func cove_object_changes_property(_ changes: OpaquePointer?, _ index: Int) -> UnsafePointer<CChar>! {
    let function: StaticString = "cove_object_changes_property"
    guard let c = lent(changes, ObjectChangesHandle.self, in: function) else { return nil }
    guard index >= 0 && index < c.entries.count else {
        _ = failure(Int32(COVE_ERR_OUT_OF_RANGE), "\(function): i \(UInt(bitPattern: index)) is out of range: the change has \(c.entries.count) properties")
        return nil
    }
    return c.entries[index].name
}

@c @implementation
public func cove_object_changes_error(_ changes: OpaquePointer?) -> UnsafePointer<CChar>! {
    lent(changes, ObjectChangesHandle.self, in: "cove_object_changes_error")?.error
}

/// The old or new value of the `index`th changed property.
private func changedValue(_ changes: OpaquePointer?, _ index: Int, _ out: UnsafeMutablePointer<cove_value_t>?,
                          in function: StaticString, _ pick: (ObjectChangesHandle.Entry) -> cove_value_t?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: function)
        let c = try handle(changes, ObjectChangesHandle.self, "changes", in: function)
        guard c.isLent else {
            throw failure(Int32(COVE_ERR_INVALIDATED), "\(function): the cove_object_changes_t is valid only during its callback")
        }
        guard index >= 0 && index < c.entries.count else {
            throw failure(Int32(COVE_ERR_OUT_OF_RANGE), "\(function): i \(UInt(bitPattern: index)) is out of range: the change has \(c.entries.count) properties")
        }
        let e = c.entries[index]
        guard let value = pick(e) else {
            throw failure(Int32(COVE_ERR_WRONG_TYPE), "\(function): \(e.withoutValues)")
        }
        out.pointee = value
    }
}

@c @implementation
public func cove_object_changes_old_value(_ changes: OpaquePointer?, _ index: Int, _ out: UnsafeMutablePointer<cove_value_t>?) -> cove_status_t {
    changedValue(changes, index, out, in: "cove_object_changes_old_value") { $0.old }
}

@c @implementation
public func cove_object_changes_new_value(_ changes: OpaquePointer?, _ index: Int, _ out: UnsafeMutablePointer<cove_value_t>?) -> cove_status_t {
    changedValue(changes, index, out, in: "cove_object_changes_new_value") { $0.new }
}

@c @implementation
public func cove_sectioned_changes_is_initial(_ changes: OpaquePointer?) -> Bool {
    lent(changes, SectionedChangesHandle.self, in: "cove_sectioned_changes_is_initial")?.isInitial ?? false
}

@c @implementation
public func cove_sectioned_changes_insertions(_ changes: OpaquePointer?, _ out: UnsafeMutablePointer<UnsafePointer<cove_index_path_t>?>?) -> Int {
    (lent(changes, SectionedChangesHandle.self, in: "cove_sectioned_changes_insertions")?.insertions ?? .empty).give(to: out)
}

@c @implementation
public func cove_sectioned_changes_deletions(_ changes: OpaquePointer?, _ out: UnsafeMutablePointer<UnsafePointer<cove_index_path_t>?>?) -> Int {
    (lent(changes, SectionedChangesHandle.self, in: "cove_sectioned_changes_deletions")?.deletions ?? .empty).give(to: out)
}

@c @implementation
public func cove_sectioned_changes_modifications(_ changes: OpaquePointer?, _ out: UnsafeMutablePointer<UnsafePointer<cove_index_path_t>?>?) -> Int {
    (lent(changes, SectionedChangesHandle.self, in: "cove_sectioned_changes_modifications")?.modifications ?? .empty).give(to: out)
}

@c @implementation
public func cove_sectioned_changes_sections_to_insert(_ changes: OpaquePointer?, _ out: UnsafeMutablePointer<UnsafePointer<Int>?>?) -> Int {
    (lent(changes, SectionedChangesHandle.self, in: "cove_sectioned_changes_sections_to_insert")?.sectionsToInsert ?? .empty).give(to: out)
}

@c @implementation
public func cove_sectioned_changes_sections_to_delete(_ changes: OpaquePointer?, _ out: UnsafeMutablePointer<UnsafePointer<Int>?>?) -> Int {
    (lent(changes, SectionedChangesHandle.self, in: "cove_sectioned_changes_sections_to_delete")?.sectionsToDelete ?? .empty).give(to: out)
}

@c @implementation
public func cove_sectioned_changes_error(_ changes: OpaquePointer?) -> UnsafePointer<CChar>! {
    lent(changes, SectionedChangesHandle.self, in: "cove_sectioned_changes_error")?.error
}
