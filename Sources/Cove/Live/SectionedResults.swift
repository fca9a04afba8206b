// SectionedResults: live results grouped into sections by a key (a key path's value, or what a
// key function says), sections ordered by key, rows within a section in the results' order.
// Changes come as index paths (section, row) plus sections inserted and deleted; a row whose
// key changes leaves its section and enters the other; observing one section follows its key.
import Synchronization

/// An index path in sectioned results.
public struct IndexPath: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var section: Int
    public var row: Int

    public init(section: Int, row: Int) {
        self.section = section
        self.row = row
    }

    public static func < (a: IndexPath, b: IndexPath) -> Bool { (a.section, a.row) < (b.section, b.row) }
    public var description: String { "[\(section), \(row)]" }
}

/// The changes of sectioned results between two deliveries.
public struct SectionedResultsChange: Equatable, Sendable {
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
    case update(SectionedResultsChange)
    case error(CoveError)
}

/// Results grouped into sections.
public final class SectionedResults<Element: RealmCollectionValue>: CustomStringConvertible {
    /// The results the sections are cut from (sorted by the key first when sectioned by a key
    /// path).
    public let results: Results<Element>
    let key: (Element) throws -> Value
    /// Whether sections go in ascending key order.
    public let ascending: Bool
    /// The key path the sections are cut by, when they are (its changes always notify).
    let keyPath: String?

    /// The sections as stored rows, cut once per version of the realm (and per edit inside a
    /// write) however many times they are read and however many sections are observed. A lock,
    /// because frozen sectioned results are read by many threads.
    private let grouping = Mutex<Grouping?>(nil)

    struct Grouping: Sendable {
        var generation: UInt64
        var edits: Int
        var sections: [(key: Value, rows: [Value])]
        var position: [Value: Int]
    }

    init(results: Results<Element>, ascending: Bool = true, keyPath: String? = nil, key: @escaping (Element) throws -> Value) {
        self.results = results
        self.ascending = ascending
        self.keyPath = keyPath
        self.key = key
    }

    /// The sections now as stored rows (links or values), ordered by key.
    func currentGrouping() throws -> Grouping {
        let realm = results.realm
        let generation = realm.generation
        let edits = try realm.objectStore().editCount
        if let hit = grouping.withLock({ g -> Grouping? in
            guard let g, g.generation == generation, g.edits == edits else { return nil }
            return g
        }) {
            return hit
        }
        var order: [Value] = []
        var byKey: [Value: [Value]] = [:]
        for v in try results.engine.elements() {
            let k = try key(try Element._fromResultsValue(v, realm))
            if byKey[k] == nil { order.append(k) }
            byKey[k, default: []].append(v)
        }
        Self.sortKeys(&order, ascending)
        let sections = order.map { (key: $0, rows: byKey[$0] ?? []) }
        let g = Grouping(generation: generation, edits: edits, sections: sections,
                         position: Dictionary(uniqueKeysWithValues: order.enumerated().map { ($1, $0) }))
        grouping.withLock { $0 = g }
        return g
    }

    /// The sections now with their rows as stored values (links for objects), ordered by key;
    /// cut once per version however often they are read.
    public func sectionRows() throws -> [(key: Value, rows: [Value])] { try currentGrouping().sections }

    /// The rows of the section of `key` now, as stored values; nil when there is none.
    public func rows(ofKey key: Value) throws -> [Value]? {
        let g = try currentGrouping()
        return g.position[key].map { g.sections[$0].rows }
    }

    /// The realm.
    public var realm: Realm { results.realm }
    /// Whether the results read a frozen realm.
    public var isFrozen: Bool { results.isFrozen }
    /// Whether the realm was closed.
    public var isInvalidated: Bool { results.realm.isClosed }

    /// The sections now: key and elements, ordered by key.
    public func sections() throws -> [(key: Value, elements: [Element])] {
        let realm = results.realm
        return try currentGrouping().sections.map { s in
            (s.key, try s.rows.map { try Element._fromResultsValue($0, realm) })
        }
    }

    static func sortKeys(_ keys: inout [Value], _ ascending: Bool) {
        keys.sort { ascending ? QueryEvaluator.sortOrder($0, $1) < 0 : QueryEvaluator.sortOrder($0, $1) > 0 }
    }

    /// The number of sections.
    public func count() throws -> Int { try currentGrouping().sections.count }

    /// The section keys, in order.
    public func allKeys() throws -> [Value] { try currentGrouping().sections.map(\.key) }

    /// The section at `index`, live: it follows its key.
    public func section(at index: Int) throws -> ResultsSection<Element> {
        let all = try currentGrouping().sections
        guard index >= 0 && index < all.count else {
            throw CoveError(.outOfRange, "section \(index) is out of range for \(all.count) sections")
        }
        return ResultsSection(parent: self, key: all[index].key)
    }

    /// A frozen copy.
    public func freeze() throws -> SectionedResults<Element> {
        SectionedResults(results: try results.freeze(), ascending: ascending, keyPath: keyPath, key: key)
    }

    /// The same sectioning in a live realm.
    public func thaw(in live: Realm) throws -> SectionedResults<Element> {
        SectionedResults(results: try results.thaw(in: live), ascending: ascending, keyPath: keyPath, key: key)
    }

    /// Calls `block` with `.initial` at the next delivery, then with the changes by index path.
    /// A change of a row's section key always notifies, whatever the key paths.
    public func observe(keyPaths: [String]? = nil, sectionKeyPath: String? = nil,
                        _ block: @escaping (SectionedChange) -> Void) throws -> NotificationToken {
        var paths = keyPaths
        if var p = paths, let sectionKeyPath = sectionKeyPath ?? keyPath, !p.contains(sectionKeyPath) {
            p.append(sectionKeyPath)
            paths = p
        }
        var old: [(key: Value, rows: [Value])] = []
        var stopped = false
        return try results.engine.observeRaw(keyPaths: paths) { change, modified in
            // A failure is delivered once; the observation ends with it.
            if stopped { return }
            let block: (SectionedChange) -> Void = { c in
                if case .error = c { stopped = true }
                block(c)
            }
            switch change {
            case .initial:
                do {
                    old = try self.currentGrouping().sections
                    block(.initial)
                } catch {
                    block(.error(error as? CoveError ?? CoveError(.callback, "\(error)")))
                }
            case .update:
                do {
                    let new = try self.currentGrouping().sections
                    let changes = Self.diff(old, new, modified)
                    old = new
                    if !changes.isEmpty { block(.update(changes)) }
                } catch {
                    block(.error(error as? CoveError ?? CoveError(.callback, "\(error)")))
                }
            case .error(let e):
                block(.error(e))
            }
        }
    }

    /// Index-path changes from `old` to `new` sections; `modified` says which rows' objects
    /// changed.
    static func diff(_ old: [(key: Value, rows: [Value])], _ new: [(key: Value, rows: [Value])],
                     _ modified: Set<Value>) -> SectionedResultsChange {
        var result = SectionedResultsChange()
        let oldIndex = Dictionary(uniqueKeysWithValues: old.enumerated().map { ($1.key, $0) })
        let newIndex = Dictionary(uniqueKeysWithValues: new.enumerated().map { ($1.key, $0) })
        for (i, s) in old.enumerated() where newIndex[s.key] == nil { result.sectionsToDelete.append(i) }
        for (j, s) in new.enumerated() where oldIndex[s.key] == nil { result.sectionsToInsert.append(j) }
        for (j, s) in new.enumerated() {
            guard let i = oldIndex[s.key] else { continue }
            let c = CollectionChangeSet.diff(old: old[i].rows, new: s.rows, modified: { modified.contains($0) })
            result.deletions += c.deletions.map { IndexPath(section: i, row: $0) }
            result.insertions += c.insertions.map { IndexPath(section: j, row: $0) }
            result.modifications += c.modifications.map { IndexPath(section: j, row: $0) }
        }
        result.deletions.sort()
        result.insertions.sort()
        result.modifications.sort()
        return result
    }

    public var description: String {
        guard let keys = try? allKeys() else { return "SectionedResults(invalid)" }
        return "SectionedResults (\(keys.count) sections: \(keys.map(\.description).joined(separator: ", ")))"
    }
}

/// One section of sectioned results: the rows whose key is `key`, live.
public final class ResultsSection<Element: RealmCollectionValue> {
    let parent: SectionedResults<Element>
    /// The section's key.
    public let key: Value

    init(parent: SectionedResults<Element>, key: Value) {
        self.parent = parent
        self.key = key
    }

    /// The section's elements now (empty when no row has the key any more).
    public func elements() throws -> [Element] {
        let realm = parent.realm
        return try (parent.rows(ofKey: key) ?? []).map { try Element._fromResultsValue($0, realm) }
    }

    /// The number of rows.
    public func count() throws -> Int { try parent.rows(ofKey: key)?.count ?? 0 }

    /// The row at `index`.
    public func element(at index: Int) throws -> Element {
        let all = try parent.rows(ofKey: key) ?? []
        guard index >= 0 && index < all.count else {
            throw CoveError(.outOfRange, "row \(index) is out of range for a section of \(all.count)")
        }
        return try Element._fromResultsValue(all[index], parent.realm)
    }

    /// Calls `block` with the changes of this key's section only, its rows as (0, row) index
    /// paths. The section follows its key and is always there for its observer: when no row
    /// has the key any more its rows are deletions, when rows have it again they are
    /// insertions (`sectionsToInsert` and `sectionsToDelete` stay empty).
    public func observe(keyPaths: [String]? = nil, sectionKeyPath: String? = nil,
                        _ block: @escaping (SectionedChange) -> Void) throws -> NotificationToken {
        var old: [Value]?
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
                let now = try parent.rows(ofKey: key)
                switch change {
                case .initial:
                    old = now
                    block(.initial)
                case .update:
                    // The observer's one section is there while it has no rows too: a key
                    // that goes away deletes its rows, one that comes back inserts them.
                    var c = SectionedResultsChange()
                    let d = CollectionChangeSet.diff(old: old ?? [], new: now ?? [], modified: { modified.contains($0) })
                    c.deletions = d.deletions.map { IndexPath(section: 0, row: $0) }
                    c.insertions = d.insertions.map { IndexPath(section: 0, row: $0) }
                    c.modifications = d.modifications.map { IndexPath(section: 0, row: $0) }
                    old = now
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
        let sorted = try sorted(by: [SortDescriptor(keyPath: keyPath, ascending: ascending)])
        let store = try realm.objectStore()
        let engine = sorted.engine
        let cls = try engine.rootClass(store)
        let binder = QueryBinder(schema: store.schema, store: store, cls: cls, elementProperty: nil, arguments: [], text: keyPath)
        let path = try binder.bindPath(QueryKeyPath(head: keyPath, steps: []))
        if path.isMultiple { throw CoveError(.invalidArgument, "cannot section on '\(keyPath)': it is a collection") }
        let realm = self.realm
        return SectionedResults(results: sorted, ascending: ascending, keyPath: keyPath) { (element: Element) throws -> Value in
            // The element's own realm: a frozen copy's keys come from its frozen version.
            let own = (element as? DynamicObject)?.realm ?? realm
            var evaluator = QueryEvaluator(store: try own.objectStore())
            let row: Value
            if let object = element as? DynamicObject { row = .link(object.link) } else if let v = element as? Value { row = v } else { row = .null }
            return try evaluator.pathValues(path, row).first ?? .null
        }
    }

    /// Sections by what `key` says of each element, over the results sorted by `sortDescriptors`
    /// (sections in ascending key order unless `ascending` is false).
    public func sectioned(sortDescriptors: [SortDescriptor], ascending: Bool = true,
                          _ key: @escaping (Element) throws -> Value) throws(CoveError) -> SectionedResults<Element> {
        let sorted = sortDescriptors.isEmpty ? self : try self.sorted(by: sortDescriptors)
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
