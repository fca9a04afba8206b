// SectionedResults: live results grouped into sections by a key (a key path's value, or what a
// key function says), sections ordered by key, rows within a section in the results' order.
// Changes come as index paths (section, row) plus sections inserted and deleted; a row whose
// key changes leaves its section and enters the other; observing one section follows its key.
import CoveCore
import FoundationEssentials
import Synchronization

/// Index paths of sectioned results are Foundation's `IndexPath`s of two indices, section then
/// row, made and read as UIKit makes and reads them (Linux has no UIKit to add these).
extension IndexPath {
    /// The index path of `row` in `section`.
    public init(row: Int, section: Int) {
        self.init(indexes: [section, row])
    }

    /// The section index (the first index).
    public var section: Int {
        get { self[0] }
        set { self[0] = newValue }
    }

    /// The row index within the section (the second index).
    public var row: Int {
        get { self[1] }
        set { self[1] = newValue }
    }
}

/// The changes of sectioned results between two deliveries.
public struct SectionedChangeSet: Equatable, Sendable {
    /// Rows that went away (old index paths), rows of deleted sections excluded.
    public var deletions: [IndexPath] = []
    /// Rows that came (new index paths), rows of inserted sections excluded.
    public var insertions: [IndexPath] = []
    /// Rows that stayed in their section and whose objects changed (new index paths).
    public var modifications: [IndexPath] = []
    /// New indices of sections that appeared.
    public var sectionsToInsert: [Int] = []
    /// Old indices of sections that disappeared.
    public var sectionsToDelete: [Int] = []

    public init() {}

    public var isEmpty: Bool {
        deletions.isEmpty && insertions.isEmpty && modifications.isEmpty && sectionsToInsert.isEmpty && sectionsToDelete.isEmpty
    }
}

/// What a sectioned-results observer receives.
public enum SectionedChange: Sendable {
    case initial
    case update(SectionedChangeSet)
    case error(CoveError)
}

/// Results grouped into sections: a random-access collection of sections, each a live
/// collection of elements, as realm-swift's `SectionedResults`. As with `Results`, the
/// collection's accessors (`count`, `sections[i]`, `allKeys`) stop the program on a failure
/// (a closed realm, a key function that threw) and their `checked` counterparts throw.
public final class SectionedResults<Element: RealmCollectionValue>: RandomAccessCollection, CustomStringConvertible {
    /// The results the sections are cut from (sorted by the key first when sectioned by a key
    /// path).
    public let results: Results<Element>
    let key: (Element) throws -> Value
    /// Whether sections go in ascending key order.
    public let ascending: Bool
    /// The key path the sections are cut by, when they are (its changes always notify).
    let keyPath: String?

    /// The sections as stored rows, cut once per version of the realm (and per edit inside a
    /// write) however many times they are read and however many sections are observed, or
    /// advanced from the last ones by an observer's delivery. A lock, because frozen sectioned
    /// results are read by many threads.
    private let grouping = Mutex<SectionGrouping?>(nil)

    init(results: Results<Element>, ascending: Bool = true, keyPath: String? = nil, key: @escaping (Element) throws -> Value) {
        self.results = results
        self.ascending = ascending
        self.keyPath = keyPath
        self.key = key
    }

    /// The generation and write count of the realm now, which a grouping is cut at.
    private func stamp() throws -> (generation: UInt64, edits: Int) {
        let realm = results.engine.realm
        return (realm.generation, try realm.objectStore().editCount)
    }

    /// The sections now as stored rows (links or values), ordered by key.
    func currentGrouping() throws -> SectionGrouping {
        let (generation, edits) = try stamp()
        if let hit = grouping.withLock({ g -> SectionGrouping? in
            guard let g, g.generation == generation, g.edits == edits else { return nil }
            return g
        }) {
            return hit
        }
        let rows = try results.engine.elements()
        var rowKeys: [Value] = []
        rowKeys.reserveCapacity(rows.count)
        for v in rows { rowKeys.append(try rowKey(v)) }
        let g = SectionGrouping(generation: generation, edits: edits, rows: rows, rowKeys: rowKeys, ascending: ascending)
        grouping.withLock { $0 = g }
        return g
    }

    /// The section key of one stored row.
    private func rowKey(_ row: Value) throws -> Value {
        try key(try Element._fromResultsValue(row, results.engine.realm))
    }

    /// The sections after the results' change set `change` took them from the rows `last` was
    /// cut from to the rows now (the results' after a delivery), kept as the sections now; nil
    /// when the sections are not advanced but cut again (sections by a key function, and see
    /// `SectionsStep`).
    func step(from last: SectionGrouping?, _ change: CollectionChangeSet) throws -> SectionsStep? {
        guard keyPath != nil, let last else { return nil }
        let (generation, edits) = try stamp()
        guard let step = try SectionsStep(from: last, change, rows: try results.engine.elements(), generation: generation, edits: edits,
                                          key: rowKey) else { return nil }
        grouping.withLock { g in
            if g?.generation != generation || g?.edits != edits { g = step.grouping }
        }
        return step
    }

    /// The sections now with their rows as stored values (links for objects), ordered by key;
    /// made once per version however often they are read.
    public func sectionRows() throws -> [(key: Value, rows: [Value])] {
        let g = try currentGrouping()
        if let made = g.materialized { return made }
        let made = g.makeSections()
        grouping.withLock { current in
            if current?.generation == g.generation && current?.edits == g.edits { current?.materialized = made }
        }
        return made
    }

    /// The rows of the section of `key` now, as stored values; nil when there is none.
    public func rows(ofKey key: Value) throws -> [Value]? {
        let g = try currentGrouping()
        return g.index(of: key).map { g.rows(at: $0) }
    }

    /// The realm; nil once it was closed.
    public var realm: Realm? { results.realm }
    /// The realm the sections read, open or closed (`realm` is nil once it was closed).
    public var sourceRealm: Realm { results.engine.realm }
    /// Whether the results read a frozen realm.
    public var isFrozen: Bool { results.isFrozen }
    /// Whether the sections can no longer be read (their realm was closed).
    public var isInvalidated: Bool { results.isInvalidated }

    /// The sections now: key and elements, ordered by key.
    public func sections() throws -> [(key: Value, elements: [Element])] {
        let realm = results.engine.realm
        return try sectionRows().map { s in
            (s.key, try s.rows.map { try Element._fromResultsValue($0, realm) })
        }
    }

    /// The number of sections.
    public func checkedCount() throws -> Int { try currentGrouping().count }

    /// The number of sections; stops the program on a failure (see `checkedCount()`).
    public var count: Int { Self.orStop("count") { try checkedCount() } }

    /// 0.
    public var startIndex: Int { 0 }
    /// The number of sections.
    public var endIndex: Int { count }

    /// The section keys, in order.
    public func checkedAllKeys() throws -> [Value] { try currentGrouping().keys }

    /// The section keys, in order; stops the program on a failure.
    public var allKeys: [Value] { Self.orStop("allKeys") { try checkedAllKeys() } }

    /// The section at `position`, live (it follows its key); stops the program when there is
    /// none (`section(at:)` throws instead).
    public subscript(position: Int) -> ResultsSection<Element> {
        Self.orStop("[\(position)]") { try section(at: position) }
    }

    /// The element at `indexPath` (section, row); stops the program when there is none.
    public subscript(indexPath: IndexPath) -> Element {
        Self.orStop("[\(indexPath)]") {
            let g = try currentGrouping()
            guard indexPath.count == 2, indexPath.section >= 0, indexPath.section < g.count else {
                throw CoveError(.outOfRange, "index path \(indexPath) is out of range for \(g.count) sections")
            }
            let count = g.rowCount(at: indexPath.section)
            guard indexPath.row >= 0, indexPath.row < count else {
                throw CoveError(.outOfRange, "row \(indexPath.row) is out of range for a section of \(count)")
            }
            return try Element._fromResultsValue(g.row(indexPath.row, at: indexPath.section), results.engine.realm)
        }
    }

    /// What `read` returns; a failure stops the program with its message, as realm-swift's
    /// accessors do.
    static func orStop<T>(_ what: String, _ read: () throws -> T) -> T {
        do { return try read() } catch {
            preconditionFailure("SectionedResults.\(what): \((error as? CoveError)?.message ?? "\(error)")")
        }
    }

    /// The section at `index`, live: it follows its key.
    public func section(at index: Int) throws -> ResultsSection<Element> {
        let keys = try currentGrouping().keys
        guard index >= 0 && index < keys.count else {
            throw CoveError(.outOfRange, "section \(index) is out of range for \(keys.count) sections")
        }
        return ResultsSection(parent: self, key: keys[index])
    }

    /// A frozen copy, readable from any thread.
    /// - Throws: `.inWrite` (inside a write), `.closed`.
    public func checkedFreeze() throws -> SectionedResults<Element> {
        SectionedResults(results: try results.checkedFreeze(), ascending: ascending, keyPath: keyPath, key: key)
    }

    /// A frozen copy; stops the program on a failure (inside a write), as realm-swift does.
    public func freeze() -> SectionedResults<Element> { Self.orStop("freeze()") { try checkedFreeze() } }

    /// The same sectioning in the live realm this frozen copy was made from (itself when it is
    /// live); nil when that realm was closed. `thaw(in:)` names another live realm.
    public func thaw() -> SectionedResults<Element>? {
        if !isFrozen { return self }
        guard let live = sourceRealm.liveSource, !live.isClosed else { return nil }
        return try? thaw(in: live)
    }

    /// The same sectioning in a live realm.
    public func thaw(in live: Realm) throws -> SectionedResults<Element> {
        SectionedResults(results: try results.thaw(in: live), ascending: ascending, keyPath: keyPath, key: key)
    }

    /// Calls `block` with `.initial` at the next delivery, then with the changes by index path.
    /// A change of a row's section key always notifies, whatever the key paths.
    public func observeChanges(keyPaths: [String]? = nil, sectionKeyPath: String? = nil,
                        _ block: @escaping (SectionedChange) -> Void) throws -> NotificationToken {
        var paths = keyPaths
        if var p = paths, let sectionKeyPath = sectionKeyPath ?? keyPath, !p.contains(sectionKeyPath) {
            p.append(sectionKeyPath)
            paths = p
        }
        var last: SectionGrouping?
        var stopped = false
        return try results.engine.observeRaw(keyPaths: paths) { change, modified in
            // A failure is delivered once; the observation ends with it.
            if stopped { return }
            let block: (SectionedChange) -> Void = { c in
                if case .error = c { stopped = true }
                block(c)
            }
            do {
                switch change {
                case .initial:
                    last = try self.currentGrouping()
                    block(.initial)
                case .update(let c):
                    let changes: SectionedChangeSet
                    if let step = try self.step(from: last, c) {
                        changes = step.changes
                        last = step.grouping
                    } else {
                        // Sections by a key function over rows and objects that did not change
                        // are as they were.
                        if c.isEmpty && self.keyPath == nil { return }
                        let new = try self.currentGrouping()
                        changes = Self.diff(last?.makeSections() ?? [], new.makeSections(), modified)
                        last = new
                    }
                    if !changes.isEmpty { block(.update(changes)) }
                case .error(let e):
                    block(.error(e))
                }
            } catch {
                block(.error(error as? CoveError ?? CoveError(.callback, "\(error)")))
            }
        }
    }

    /// Index-path changes from `old` to `new` sections; `modified` says which rows' objects
    /// changed.
    static func diff(_ old: [(key: Value, rows: [Value])], _ new: [(key: Value, rows: [Value])],
                     _ modified: Set<Value>) -> SectionedChangeSet {
        var result = SectionedChangeSet()
        let oldIndex = Dictionary(uniqueKeysWithValues: old.enumerated().map { ($1.key, $0) })
        let newIndex = Dictionary(uniqueKeysWithValues: new.enumerated().map { ($1.key, $0) })
        for (i, s) in old.enumerated() where newIndex[s.key] == nil { result.sectionsToDelete.append(i) }
        for (j, s) in new.enumerated() where oldIndex[s.key] == nil { result.sectionsToInsert.append(j) }
        for (j, s) in new.enumerated() {
            guard let i = oldIndex[s.key] else { continue }
            let c = CollectionChangeSet.diff(old: old[i].rows, new: s.rows, modified: { modified.contains($0) })
            result.deletions += c.deletions.map { IndexPath(row: $0, section: i) }
            result.insertions += c.insertions.map { IndexPath(row: $0, section: j) }
            result.modifications += c.modifications.map { IndexPath(row: $0, section: j) }
        }
        result.deletions.sort()
        result.insertions.sort()
        result.modifications.sort()
        return result
    }

    /// Whether both are the same sectioned results.
    public static func == (lhs: SectionedResults, rhs: SectionedResults) -> Bool { lhs === rhs }

    public var description: String {
        guard let keys = try? checkedAllKeys() else { return "SectionedResults(invalid)" }
        return "SectionedResults (\(keys.count) sections: \(keys.map(\.description).joined(separator: ", ")))"
    }
}

/// One section of sectioned results: the rows whose key is `key`, live (a random-access
/// collection of elements, as realm-swift's `ResultsSection`).
public final class ResultsSection<Element: RealmCollectionValue>: RandomAccessCollection, CustomStringConvertible {
    let parent: SectionedResults<Element>
    /// The section's key.
    public let key: Value

    init(parent: SectionedResults<Element>, key: Value) {
        self.parent = parent
        self.key = key
    }

    /// The section's elements now (empty when no row has the key any more).
    public func elements() throws -> [Element] {
        let realm = parent.sourceRealm
        return try (parent.rows(ofKey: key) ?? []).map { try Element._fromResultsValue($0, realm) }
    }

    /// The number of rows.
    public func checkedCount() throws -> Int { try parent.rows(ofKey: key)?.count ?? 0 }

    /// The number of rows; stops the program on a failure (see `checkedCount()`).
    public var count: Int { SectionedResults<Element>.orStop("section count") { try checkedCount() } }

    /// 0.
    public var startIndex: Int { 0 }
    /// The number of rows.
    public var endIndex: Int { count }

    /// The row at `position`; stops the program when there is none (`element(at:)` throws).
    public subscript(position: Int) -> Element {
        SectionedResults<Element>.orStop("section[\(position)]") { try element(at: position) }
    }

    /// The realm; nil once it was closed.
    public var realm: Realm? { parent.realm }
    /// Whether the section reads a frozen realm.
    public var isFrozen: Bool { parent.isFrozen }
    /// Whether the section can no longer be read.
    public var isInvalidated: Bool { parent.isInvalidated }

    /// The same section of a frozen copy of the sectioned results.
    public func freeze() -> ResultsSection<Element> { ResultsSection(parent: parent.freeze(), key: key) }

    /// The same section in the live realm the frozen copy was made from; nil when that realm
    /// was closed.
    public func thaw() -> ResultsSection<Element>? { parent.thaw().map { ResultsSection(parent: $0, key: key) } }

    /// Whether both are the section of the same key of the same sectioned results.
    public static func == (lhs: ResultsSection, rhs: ResultsSection) -> Bool { lhs.parent === rhs.parent && lhs.key == rhs.key }

    public var description: String { "ResultsSection(\(key): \((try? checkedCount()) ?? 0) rows)" }

    /// The row at `index`.
    public func element(at index: Int) throws -> Element {
        let all = try parent.rows(ofKey: key) ?? []
        guard index >= 0 && index < all.count else {
            throw CoveError(.outOfRange, "row \(index) is out of range for a section of \(all.count)")
        }
        return try Element._fromResultsValue(all[index], parent.sourceRealm)
    }

    /// Calls `block` with the changes of this key's section only, its rows as (0, row) index
    /// paths. The section follows its key and is always there for its observer: when no row
    /// has the key any more its rows are deletions, when rows have it again they are
    /// insertions (`sectionsToInsert` and `sectionsToDelete` stay empty).
    public func observeChanges(keyPaths: [String]? = nil, sectionKeyPath: String? = nil,
                        _ block: @escaping (SectionedChange) -> Void) throws -> NotificationToken {
        var last: SectionGrouping?
        let key = self.key
        let parent = self.parent
        var stopped = false
        let deliver = block
        let block: (SectionedChange) -> Void = { c in
            if stopped { return }
            if case .error = c { stopped = true }
            deliver(c)
        }
        var paths = keyPaths
        if var p = paths, let sectionKeyPath = sectionKeyPath ?? parent.keyPath, !p.contains(sectionKeyPath) {
            p.append(sectionKeyPath)
            paths = p
        }
        return try parent.results.engine.observeRaw(keyPaths: paths) { change, modified in
            do {
                switch change {
                case .initial:
                    last = try parent.currentGrouping()
                    block(.initial)
                case .update(let u):
                    // The observer's one section is there while it has no rows too: a key
                    // that goes away deletes its rows, one that comes back inserts them.
                    var c: SectionedChangeSet
                    if let previous = last, let step = try parent.step(from: previous, u) {
                        c = step.changes(ofKey: key, from: previous)
                        last = step.grouping
                    } else {
                        if u.isEmpty && parent.keyPath == nil { return }
                        let new = try parent.currentGrouping()
                        func rows(_ g: SectionGrouping?) -> [Value] { g.flatMap { g in g.index(of: key).map { g.rows(at: $0) } } ?? [] }
                        let d = CollectionChangeSet.diff(old: rows(last), new: rows(new), modified: { modified.contains($0) })
                        c = SectionedChangeSet()
                        c.deletions = d.deletions.map { IndexPath(row: $0, section: 0) }
                        c.insertions = d.insertions.map { IndexPath(row: $0, section: 0) }
                        c.modifications = d.modifications.map { IndexPath(row: $0, section: 0) }
                        last = new
                    }
                    if !c.isEmpty { block(.update(c)) }
                case .error(let e):
                    block(.error(e))
                }
            } catch {
                block(.error(error as? CoveError ?? CoveError(.callback, "\(error)")))
            }
        }
    }
}

extension Results {
    /// Sections by the value of `keyPath` (through to-one links), ordered ascending or
    /// descending by key; rows within a section keep the results' order.
    public func sectioned(by keyPath: String, ascending: Bool = true) throws(CoveError) -> SectionedResults<Element> {
        let sorted = sorted(by: [SortDescriptor(keyPath: keyPath, ascending: ascending)])
        if let failure = sorted.queryError { throw failure }
        let store = try self.engine.realm.objectStore()
        let engine = sorted.engine
        let cls = try engine.rootClass(store)
        let binder = QueryBinder(schema: store.schema, store: store, cls: cls, elementProperty: nil, arguments: [], text: keyPath)
        let path = try binder.bindPath(QueryKeyPath(head: keyPath, steps: []))
        if path.isMultiple { throw CoveError(.invalidArgument, "cannot section on '\(keyPath)': it is a collection") }
        let realm = engine.realm
        return SectionedResults(results: sorted, ascending: ascending, keyPath: keyPath) { (element: Element) throws -> Value in
            // The element's own realm: a frozen copy's keys come from its frozen version.
            let object = (element as? DynamicObject) ?? (element as? Object)?.dynamicObject
            let own = object?.realm ?? realm
            var evaluator = QueryEvaluator(store: try own.objectStore())
            let row: Value
            if let object { row = .link(object.link) } else if let v = element as? Value { row = v } else { row = .null }
            return try evaluator.pathValues(path, row).first ?? .null
        }
    }

    /// Sections by what `key` says of each element, over the results sorted by `sortDescriptors`
    /// (sections in ascending key order unless `ascending` is false).
    public func sectioned(sortDescriptors: [SortDescriptor], ascending: Bool = true,
                          _ key: @escaping (Element) throws -> Value) throws(CoveError) -> SectionedResults<Element> {
        let sorted = sortDescriptors.isEmpty ? self : self.sorted(by: sortDescriptors)
        if let failure = sorted.queryError { throw failure }
        return SectionedResults(results: sorted, ascending: ascending, key: key)
    }
}

/// The built-in key functions.
public enum SectionKey {
    /// The first letter of a string property, uppercased (`""` for an empty or null string).
    public static func firstLetter(_ property: String) -> (DynamicObject) throws -> Value {
        { object in
            guard case .string(let s) = try object.value(forKey: property), let first = s.first else { return .string("") }
            return .string(String(first).uppercased())
        }
    }
}
