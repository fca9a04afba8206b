// Results: the objects of a class (or the elements of a list or set) that a chain of queries,
// sorts and distincts selects. Lazy: nothing runs until a read, and chaining builds new Results
// without evaluating the ones in between. Live: every read shows the realm's current version on
// its thread, the uncommitted changes of a write in progress included; the matches are computed
// again only when the version or the write changed.
import CoveCore
import FoundationEssentials
import Synchronization

/// A value a Results can hold: objects (dynamic or model classes) and the primitive types.
public protocol RealmCollectionValue {
    /// The element for a stored value (a link for objects).
    static func _fromResultsValue(_ value: Value, _ realm: Realm) throws(CoveError) -> Self
}

extension Value: RealmCollectionValue {
    public static func _fromResultsValue(_ value: Value, _ realm: Realm) -> Value { value }
}

extension DynamicObject: RealmCollectionValue {
    public static func _fromResultsValue(_ value: Value, _ realm: Realm) throws(CoveError) -> Self {
        guard case .link(let link) = value, let object = try realm.object(for: link) as? Self else {
            throw CoveError(.invalidated, "a result's object was deleted")
        }
        return object
    }
}

extension RealmCollectionValue where Self: _PersistableValue {
    public static func _fromResultsValue(_ value: Value, _ realm: Realm) throws(CoveError) -> Self {
        try _coveRead(value, realm)
    }
}

extension Int: RealmCollectionValue {}
extension Int64: RealmCollectionValue {}
extension Bool: RealmCollectionValue {}
extension Double: RealmCollectionValue {}
extension Float: RealmCollectionValue {}
extension String: RealmCollectionValue {}
extension Timestamp: RealmCollectionValue {}
extension Decimal128: RealmCollectionValue {}
extension ObjectId: RealmCollectionValue {}
extension UUID: RealmCollectionValue {}
extension Object: RealmCollectionValue {}

/// A sort key: a key path and a direction (realm-swift's `SortDescriptor`).
public struct SortDescriptor: Sendable, Equatable {
    public var keyPath: String
    public var ascending: Bool

    public init(keyPath: String, ascending: Bool = true) {
        self.keyPath = keyPath
        self.ascending = ascending
    }
}

/// The selected objects or values, lazily evaluated and always current: a random-access
/// collection, as realm-swift's `Results` is.
///
/// Two ways to read them. The collection's own accessors (`count`, `results[i]`, `first`,
/// `for x in results`) are realm-swift's: they cannot throw, so a failure (a bad query, a
/// closed realm, a list whose owner was deleted) stops the program with its message, as
/// realm-swift does. Their `checked` counterparts and the throwing reads (`checkedCount()`,
/// `element(at:)`, `elements()`, the aggregates) throw the `CoveError` instead:
/// `.querySyntax` or `.invalidArgument` for a bad query (a query is parsed when the results
/// are made and bound when they first run; its error waits for the first read), `.closed`,
/// `.invalidated`. Iteration walks the matches as they were when it began.
public final class Results<Element: RealmCollectionValue>: RandomAccessCollection, CustomStringConvertible {
    let engine: ResultsEngine

    init(engine: ResultsEngine) {
        self.engine = engine
    }

    /// The realm the results read; nil once it was closed.
    public var realm: Realm? { engine.realm.isClosed ? nil : engine.realm }

    /// The realm the results read, open or closed (`realm` is nil once it was closed).
    public var sourceRealm: Realm { engine.realm }

    /// Whether the results can no longer be read: their realm was closed, or the list or set
    /// they come from lost its owner.
    public var isInvalidated: Bool {
        if engine.realm.isClosed { return true }
        switch engine.source {
        case .table: return false
        case .list(let l): return l.owner.isInvalidated
        case .set(let s): return s.owner.isInvalidated
        case .backlinks: return false
        }
    }

    /// Whether the results read a frozen realm.
    public var isFrozen: Bool { engine.realm.isFrozen }

    /// The error these results were made with (a query that does not parse, a sort without
    /// keys), which every read throws; nil when there is none. A query that parses but names
    /// an unknown property is found when the results first run.
    public var queryError: CoveError? { engine.failure }

    /// The number of matches.
    /// - Complexity: the query's cost the first time after a change, O(1) after.
    /// - Throws: what evaluating the query throws.
    public func checkedCount() throws(CoveError) -> Int { try engine.count() }

    /// The number of matches; stops the program on a failure (see `checkedCount()`).
    public var count: Int {
        do { return try engine.count() } catch { preconditionFailure("Results.count: \(error.message)") }
    }

    /// 0.
    public var startIndex: Int { 0 }
    /// The number of matches.
    public var endIndex: Int { count }

    /// The match at `index`.
    /// - Throws: `.outOfRange`, and what evaluating the query throws.
    public func element(at index: Int) throws(CoveError) -> Element {
        let all = try engine.elements()
        guard index >= 0 && index < all.count else {
            throw CoveError(.outOfRange, "index \(index) is out of range for results of \(all.count)")
        }
        return try Element._fromResultsValue(all[index], engine.realm)
    }

    /// The match at `position`; traps on an error, as realm-swift's subscript does (use
    /// `element(at:)` to handle it).
    public subscript(position: Int) -> Element {
        do { return try element(at: position) } catch { preconditionFailure("Results[\(position)]: \(error.message)") }
    }

    /// Every match, in order.
    public func elements() throws(CoveError) -> [Element] {
        let realm = engine.realm
        return try engine.elements().map { (v) throws(CoveError) in try Element._fromResultsValue(v, realm) }
    }

    /// The object keys of the matches from `start` (objects only), for batch reads.
    public func objectKeys(from start: Int = 0, count: Int = .max) throws(CoveError) -> [Int64] {
        let all = try engine.elements()
        guard start >= 0 && start <= all.count else {
            throw CoveError(.outOfRange, "start \(start) is out of range for results of \(all.count)")
        }
        let end = start + Swift.min(count, all.count - start)
        var keys: [Int64] = []
        keys.reserveCapacity(end - start)
        for element in all[start..<end] {
            if case .link(let l) = element { keys.append(l.objectKey) }
        }
        return keys
    }

    /// Iterates over the matches as they are when iteration begins; stops the program on a
    /// failure, as realm-swift does (`elements()` throws it instead).
    public func makeIterator() -> IndexingIterator<[Element]> {
        do { return try elements().makeIterator() } catch { preconditionFailure("Results iteration: \(error.message)") }
    }

    // MARK: Chaining (lazy)

    /// The matches that also satisfy `query` (RQL, docs/query-language.md), with `$0...` bound
    /// to `arguments`; a syntax error throws here, a query that names an unknown property
    /// throws at the first read.
    public func filter(_ query: String, arguments: [QueryArgument]) throws(CoveError) -> Results<Element> {
        Results(engine: try engine.adding(.query(try QueryParser.parse(query, argumentCount: arguments.count), arguments, query)))
    }

    /// The matches that also satisfy `query`, as realm-swift calls it (`filter("age > $0", 3)`):
    /// it does not throw, and a query that does not parse makes results whose reads throw (or,
    /// through the non-throwing accessors, stop the program) and whose observers receive
    /// `.error`; `queryError` tells at once.
    public func filter(_ query: String, _ arguments: Value...) -> Results<Element> {
        filter(deferring: query, arguments.map { QueryArgument.value($0) })
    }

    /// `filter(_:arguments:)` whose error the results carry instead of throwing it.
    func filter(deferring query: String, _ arguments: [QueryArgument]) -> Results<Element> {
        deferring { () throws(CoveError) in try filter(query, arguments: arguments) }
    }

    /// `filter` with Swift values as arguments (`Int`, `Double`, `String`, `Bool`, `Date`,
    /// `Data`, objects, `ObjectId`, `UUID`, `Decimal128`, and arrays of them for `IN`).
    @_disfavoredOverload
    public func filter(_ query: String, _ arguments: Any...) -> Results<Element> {
        deferring { () throws(CoveError) in
            try filter(query, arguments: try arguments.map { (a) throws(CoveError) in try QueryArgument(swiftValue: a) })
        }
    }

    /// Sorted by `keyPath` (through to-one links), stably. An unknown key path is an error of
    /// the results' reads, as with `filter`.
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Element> {
        sorted(by: [SortDescriptor(keyPath: keyPath, ascending: ascending)])
    }

    /// Sorted by several keys, the first one primary.
    public func sorted<S: Sequence>(by descriptors: S) -> Results<Element> where S.Element == SortDescriptor {
        deferring { () throws(CoveError) in Results(engine: try engine.adding(.sort(descriptors.map { QueryPlan.SortKey(keyPath: $0.keyPath, ascending: $0.ascending) }))) }
    }

    /// The first match of each distinct combination of the key paths' values, in order.
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String {
        deferring { () throws(CoveError) in Results(engine: try engine.adding(.distinct(Array(keyPaths)))) }
    }

    /// The results `make` makes, or results that carry its error.
    private func deferring(_ make: () throws(CoveError) -> Results<Element>) -> Results<Element> {
        do { return try make() } catch { return Results(engine: engine.failing(error)) }
    }

    // MARK: Aggregates

    /// The smallest value of `property` among the matches (numbers and dates); nil when none.
    /// - Throws: `.wrongType` for a property of another type, whatever the matches.
    public func min(ofProperty property: String? = nil) throws(CoveError) -> Value? {
        try engine.requireAggregate("min", property, dates: true)
        return try CollectionAggregates.extreme(try engine.propertyValues(property), largest: false, of: engine.describe(property))
    }

    /// The greatest value of `property` among the matches; nil when none.
    public func max(ofProperty property: String? = nil) throws(CoveError) -> Value? {
        try engine.requireAggregate("max", property, dates: true)
        return try CollectionAggregates.extreme(try engine.propertyValues(property), largest: true, of: engine.describe(property))
    }

    /// The sum of `property` over the matches (zero of its type when none).
    public func sum(ofProperty property: String? = nil) throws(CoveError) -> Value {
        try engine.requireAggregate("sum", property, dates: false)
        return try CollectionAggregates.sum(try engine.propertyValues(property), of: engine.describe(property),
                                            elementType: try engine.propertyType(property))
    }

    /// The mean of `property` over the matches; nil when none.
    public func average(ofProperty property: String? = nil) throws(CoveError) -> Value? {
        try engine.requireAggregate("average", property, dates: false)
        return try CollectionAggregates.average(try engine.propertyValues(property), of: engine.describe(property))
    }

    // MARK: Export, plan, freezing

    /// The matches as a JSON array (objects as `cove dump` writes them).
    public func jsonText() throws(CoveError) -> String {
        try engine.json().serialized()
    }

    /// How the results are computed: the index used, if any, and the stages.
    public func explain() throws(CoveError) -> String { try engine.explain() }

    /// The same results over a frozen copy of the realm at its current version.
    /// - Throws: `.inWrite` (inside a write), `.closed`, `.invalidated`.
    public func checkedFreeze() throws(CoveError) -> Results<Element> {
        try engine.realm.checkOpen()
        if isFrozen { return self }
        return Results(engine: try engine.moved(to: try engine.realm.freeze()))
    }

    /// The same results in a live realm (on its current version).
    public func thaw(in live: Realm) throws(CoveError) -> Results<Element> {
        Results(engine: try engine.moved(to: live))
    }

    /// A description of the results: their element type, how many they are and how they are
    /// made (`Results<Dog> (3) Dog filter(age > 2)`).
    public var description: String {
        guard let count = try? checkedCount() else { return "Results<\(Element.self)>(invalid)" }
        return "Results<\(Element.self)> (\(count)) \(engine.summary)"
    }

    /// Whether two values are the same results (the same source, stages and realm, made once).
    public static func == (lhs: Results<Element>, rhs: Results<Element>) -> Bool { lhs.engine === rhs.engine }
}

extension Results: Equatable {}

extension Results: Encodable where Element: Encodable {
    /// The matches, in order, as an unkeyed container.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        for element in try elements() { try container.encode(element) }
    }
}

/// The engine behind Results: what to read and the stages to apply, with the last evaluation
/// kept while the realm's version and write are unchanged.
final class ResultsEngine {
    enum Source {
        case table(className: String)
        case list(DynamicList)
        case set(DynamicSet)
        /// The objects linking to an object through its backlinks property, one per link.
        case backlinks(DynamicObject, property: String)
    }

    /// A query, a sort or a DISTINCT, as the core's query runner takes it.
    typealias Stage = QueryStage

    let realm: Realm
    let source: Source
    let stages: [Stage]
    /// Why these results cannot be read (a query that did not parse, a sort without keys):
    /// every evaluation throws it.
    let failure: CoveError?
    /// The last evaluation, with the realm generation and write count it was made at. Frozen
    /// results are read by many threads at once, so the cache sits behind a lock (evaluation
    /// itself runs outside it).
    private let cache = Mutex<(generation: UInt64, edits: Int, elements: [Value], plan: QueryPlan)?>(nil)
    /// The subscription `subscribe` made for these results, for `unsubscribe`.
    let subscription = Mutex<SubscriptionRecordEntry?>(nil)

    init(realm: Realm, source: Source, stages: [Stage] = [], failure: CoveError? = nil) {
        self.realm = realm
        self.source = source
        self.stages = stages
        self.failure = failure
    }

    /// The same results, failing with `error` (or their own earlier failure).
    func failing(_ error: CoveError) -> ResultsEngine {
        ResultsEngine(realm: realm, source: source, stages: stages, failure: failure ?? error)
    }

    func adding(_ stage: Stage) throws(CoveError) -> ResultsEngine {
        if let failure { throw failure }
        if case .sort(let keys) = stage, keys.isEmpty { throw CoveError(.invalidArgument, "sorted(by:) needs at least one key") }
        if case .distinct(let keys) = stage, keys.isEmpty { throw CoveError(.invalidArgument, "distinct(by:) needs at least one key path") }
        return ResultsEngine(realm: realm, source: source, stages: stages + [stage])
    }

    /// The same source and stages over another realm (freeze, thaw).
    func moved(to other: Realm) throws(CoveError) -> ResultsEngine {
        let moved: Source
        switch source {
        case .table: moved = source
        case .list(let l):
            guard let owner = try other.dynamicObject(ofType: l.owner.objectSchema.className, objectKey: l.owner.objectKey) else {
                throw CoveError(.invalidated, "the list's owner was deleted")
            }
            moved = .list(try owner.dynamicList(l.property.name))
        case .set(let s):
            guard let owner = try other.dynamicObject(ofType: s.owner.objectSchema.className, objectKey: s.owner.objectKey) else {
                throw CoveError(.invalidated, "the set's owner was deleted")
            }
            moved = .set(try owner.dynamicMutableSet(s.property.name))
        case .backlinks(let target, let name):
            // Not refused when the object is gone there: nothing links to it, no rows.
            let store = try other.objectStore()
            let cls = try store.objectSchema(target.objectSchema.className)
            moved = .backlinks(DynamicObject(realm: other, objectSchema: cls, classKey: try store.classKey(of: cls),
                                             objectKey: target.objectKey), property: name)
        }
        return ResultsEngine(realm: other, source: moved, stages: stages, failure: failure)
    }

    var summary: String {
        var parts: [String] = []
        switch source {
        case .table(let name): parts.append(name)
        case .list(let l): parts.append("\(l.owner.objectSchema.className).\(l.property.name)")
        case .set(let s): parts.append("\(s.owner.objectSchema.className).\(s.property.name)")
        case .backlinks(let target, let name): parts.append("\(target.objectSchema.className).\(name)")
        }
        for stage in stages {
            switch stage {
            case .query(_, _, let text): parts.append("filter(\(text))")
            case .sort(let keys): parts.append("sorted(" + keys.map(\.description).joined(separator: ", ") + ")")
            case .distinct(let keys): parts.append("distinct(" + keys.joined(separator: ", ") + ")")
            }
        }
        return parts.joined(separator: " ")
    }

    /// The class of the objects, or nil for values; and the element property for values.
    private func subject(_ store: ObjectStore) throws(CoveError) -> (cls: ObjectSchema?, element: Property?) {
        switch source {
        case .table(let name): return (try store.objectSchema(name), nil)
        case .list(let l):
            if let target = l.property.type.objectClassName { return (try store.objectSchema(target), nil) }
            return (nil, l.property)
        case .set(let s):
            if let target = s.property.type.objectClassName { return (try store.objectSchema(target), nil) }
            return (nil, s.property)
        case .backlinks(let target, let name):
            guard case .linkingObjects(let source, _)? = target.objectSchema[property: name]?.type else {
                throw CoveError(.wrongType, "property '\(name)' of class '\(target.objectSchema.className)' is not backlinks")
            }
            return (try store.objectSchema(source), nil)
        }
    }

    // MARK: Evaluation

    /// The matches: links for objects, values for a collection of values.
    func elements() throws(CoveError) -> [Value] {
        if let failure { throw failure }
        let store = try realm.objectStore()
        let generation = realm.generation
        let edits = store.editCount
        if let hit = cache.withLock({ c -> [Value]? in
            guard let c, c.generation == generation, c.edits == edits else { return nil }
            return c.elements
        }) {
            return hit
        }
        let (cls, elementProperty) = try subject(store)
        let runner = QueryRunner(store: store, cls: cls, elementProperty: elementProperty, summary: summary)
        let from: QuerySource
        switch source {
        case .table:
            from = .table
        case .list(let l):
            let rows = try l.values()
            from = .rows(rows, .elements(of: "\(l.owner.objectSchema.className).\(l.property.name)", count: rows.count))
        case .set(let s):
            let rows = try s.values()
            from = .rows(rows, .elements(of: "\(s.owner.objectSchema.className).\(s.property.name)", count: rows.count))
        case .backlinks(let target, let name):
            // The object's deletion leaves nothing linking to it: no rows, not an error.
            let (_, classKey, keys) = try target.linkingKeys(name, requireExisting: false)
            let rows: [Value] = keys.map { .link(ObjectLink(classKey: classKey, objectKey: $0)) }
            from = .rows(rows, .links(of: "\(target.objectSchema.className).\(name)", count: rows.count))
        }
        let (current, plan) = try runner.run(from, stages)
        cache.withLock { $0 = (generation, edits, current, plan) }
        return current
    }

    /// The number of matches: the last evaluation's when it stands; for a table filtered by
    /// one query (no SORT, DISTINCT or LIMIT in it) that an index narrows or answers whole, or
    /// that runs over the columns, counted without collecting the matches; otherwise by
    /// evaluating.
    func count() throws(CoveError) -> Int {
        if let failure { throw failure }
        let store = try realm.objectStore()
        let generation = realm.generation
        let edits = store.editCount
        if let hit = cache.withLock({ c -> Int? in
            guard let c, c.generation == generation, c.edits == edits else { return nil }
            return c.elements.count
        }) {
            return hit
        }
        if case .table = source, let cls = try subject(store).cls,
           let n = try QueryRunner(store: store, cls: cls, elementProperty: nil, summary: summary).fastCount(stages) {
            return n
        }
        return try elements().count
    }

    /// Takes `elements` and `plan`, computed for the realm's current version elsewhere (the
    /// change worker ran the same query on a frozen copy at that version), as this engine's
    /// evaluation, so the first read after a delivery does not run the query again.
    func seed(_ elements: [Value], plan: QueryPlan) {
        guard let store = try? realm.objectStore() else { return }
        let generation = realm.generation
        let edits = store.editCount
        cache.withLock { $0 = (generation, edits, elements, plan) }
    }

    /// The plan of the last evaluation (no steps before any).
    var lastPlan: QueryPlan { cache.withLock { $0?.plan ?? QueryPlan() } }

    /// How the last evaluation produced the rows, evaluating first if needed.
    func explain() throws(CoveError) -> String {
        _ = try elements()
        return lastPlan.description
    }

    // MARK: Aggregates and export

    func describe(_ property: String?) -> String {
        "\(property ?? "the elements") of \(summary)"
    }

    /// The values of `property` of each matching object, or the matches themselves for values.
    func propertyValues(_ property: String?) throws(CoveError) -> [Value] {
        let rows = try elements()
        let store = try realm.objectStore()
        let (cls, elementProperty) = try subject(store)
        guard let property else {
            guard elementProperty != nil else { throw CoveError(.invalidArgument, "aggregates of objects need a property name") }
            return rows
        }
        guard let cls else { throw CoveError(.invalidArgument, "the results hold values, not objects with a property '\(property)'") }
        let binder = QueryBinder(schema: store.schema, store: store, cls: cls, elementProperty: nil, arguments: [], text: property)
        let path = try binder.bindPath(QueryKeyPath(head: property, steps: []))
        if path.isMultiple { throw CoveError(.invalidArgument, "'\(property)' is a collection: aggregate a single-valued property") }
        var evaluator = QueryEvaluator(store: store)
        var out: [Value] = []
        out.reserveCapacity(rows.count)
        for row in rows { out.append(contentsOf: try evaluator.pathValues(path, row)) }
        return out
    }

    /// Refuses an aggregate of a property type that has none (checked even with no matches).
    func requireAggregate(_ what: String, _ property: String?, dates: Bool) throws(CoveError) {
        if let property {
            let store = try realm.objectStore()
            if let cls = try subject(store).cls {
                let binder = QueryBinder(schema: store.schema, store: store, cls: cls, elementProperty: nil, arguments: [], text: property)
                if try binder.bindPath(QueryKeyPath(head: property, steps: [])).isMultiple {
                    throw CoveError(.invalidArgument, "'\(property)' is a collection: aggregate a single-valued property")
                }
            }
        }
        let type = try propertyType(property)
        switch type {
        case .int, .float, .double, .decimal128, .mixed: return
        case .date where dates: return
        default: throw CoveError(.wrongType, "\(what) of \(describe(property)): \(type.name) has no \(what)")
        }
    }

    func propertyType(_ property: String?) throws(CoveError) -> PropertyType {
        let store = try realm.objectStore()
        let (cls, elementProperty) = try subject(store)
        guard let property else { return elementProperty?.type ?? .mixed }
        guard let cls else { return .mixed }
        let binder = QueryBinder(schema: store.schema, store: store, cls: cls, elementProperty: nil, arguments: [], text: property)
        return try binder.bindPath(QueryKeyPath(head: property, steps: [])).type ?? .mixed
    }

    func json() throws(CoveError) -> JSONValue {
        let rows = try elements()
        let store = try realm.objectStore()
        let (cls, elementProperty) = try subject(store)
        var items: [JSONValue] = []
        items.reserveCapacity(rows.count)
        for row in rows {
            if cls != nil, case .link(let link) = row, let object = try realm.object(for: link) {
                items.append(try ObjectJSON.encode(object))
            } else if let p = elementProperty {
                items.append(try ObjectJSON.encode(row, p, realm))
            }
        }
        return .array(items)
    }
}

extension Realm {
    /// Every object of `className`, as live, lazy Results (filter, sort and distinct them).
    /// - Throws: `.notFound` (class).
    public func objects(_ className: String) throws(CoveError) -> Results<DynamicObject> {
        _ = try objectStore().visibleObjectSchema(className)
        return Results(engine: ResultsEngine(realm: self, source: .table(className: className)))
    }

    /// The objects of `className` that `query` selects (RQL).
    public func objects(_ className: String, where query: String, _ arguments: Value...) throws(CoveError) -> Results<DynamicObject> {
        try objects(className).filter(query, arguments: arguments.map { QueryArgument.value($0) })
    }
}

extension DynamicList {
    /// The list's elements as Results (objects for a list of objects, values otherwise), in
    /// list order; filter, sort and distinct them like any Results.
    public func asResults() -> Results<Value> {
        Results(engine: ResultsEngine(realm: realm, source: .list(self)))
    }
}

extension DynamicObject {
    /// The objects linking here through backlinks property `name`, as live Results of their
    /// class: one row per link (a list holding this object twice gives its owner twice), in
    /// object-key order; empty once this object is deleted.
    /// - Throws: `.notFound` (no such property), `.wrongType` (not backlinks), `.closed`.
    public func linkingObjectsResults(_ name: String) throws(CoveError) -> Results<DynamicObject> {
        _ = try linkingKeys(name, requireExisting: false)
        return Results(engine: ResultsEngine(realm: realm, source: .backlinks(self, property: name)))
    }
}

extension DynamicSet {
    /// The set's elements as Results.
    public func asResults() -> Results<Value> {
        Results(engine: ResultsEngine(realm: realm, source: .set(self)))
    }
}

extension QueryArgument {
    /// The argument for a Swift value, as realm-swift's `filter` takes them: the types a model
    /// property holds (`Int`, `String`, `Double`, `Bool`, `Date`, `Data`, `ObjectId`, `UUID`,
    /// `Decimal128`, objects, optionals of them), a `Value`, or an array of them for `IN`.
    /// - Throws: `.invalidArgument` for a value of another type.
    public init(swiftValue: Any) throws(CoveError) {
        if let list = swiftValue as? [Any] {
            self = .list(try list.map { (v) throws(CoveError) -> Value in
                guard case .value(let value) = try QueryArgument(swiftValue: v) else {
                    throw CoveError(.invalidArgument, "a query argument's array holds an array")
                }
                return value
            })
        } else if let argument = swiftValue as? QueryArgument {
            self = argument
        } else if let value = swiftValue as? Value {
            self = .value(value)
        } else if let object = swiftValue as? DynamicObject {
            self = .value(.link(object.link))
        } else if let object = swiftValue as? Object {
            guard let managed = object.dynamicObject else {
                throw CoveError(.invalidArgument, "an unmanaged \(type(of: object).className) is not a query argument: add it to the realm first")
            }
            self = .value(.link(managed.link))
        } else if let persistable = swiftValue as? any _PersistableValue {
            self = .value(try persistable._coveWrite(nil))
        } else {
            throw CoveError(.invalidArgument, "a query argument of type \(type(of: swiftValue)) is not a value Cove stores")
        }
    }
}
