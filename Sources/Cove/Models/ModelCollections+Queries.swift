// Queries over the typed lists and sets of model classes, as realm-swift offers them: filter,
// sort and distinct give live Results over the collection's elements, and the aggregates
// read one property of its objects. A collection must be managed (its owner in a realm).
import CoveCore

extension ManagedElements where Element: RealmCollectionValue {
    /// The collection's elements as live Results, in its order. Stops the program for an
    /// unmanaged collection, whose elements no query reads.
    func results() -> Results<Element> {
        guard let managed else { preconditionFailure("\(Self.self): an unmanaged collection cannot be queried (add its owner to a realm first)") }
        if let list = managed as? DynamicList { return Results(engine: ResultsEngine(realm: list.realm, source: .list(list))) }
        if let set = managed as? DynamicSet { return Results(engine: ResultsEngine(realm: set.realm, source: .set(set))) }
        preconditionFailure("\(Self.self) is neither a list nor a set")
    }
}

extension List where Element: RealmCollectionValue {
    /// The elements that satisfy `query` (RQL), as live Results.
    public func filter(_ query: String, _ arguments: Value...) -> Results<Element> {
        results().filter(deferring: query, arguments.map { QueryArgument.value($0) })
    }

    /// The elements sorted by `keyPath` (`self` for values), as live Results.
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Element> {
        results().sorted(byKeyPath: keyPath, ascending: ascending)
    }

    /// The first element of each distinct value of the key paths, as live Results.
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String { results().distinct(by: keyPaths) }
}

extension MutableSet where Element: RealmCollectionValue {
    /// The elements that satisfy `query` (RQL), as live Results.
    public func filter(_ query: String, _ arguments: Value...) -> Results<Element> {
        results().filter(deferring: query, arguments.map { QueryArgument.value($0) })
    }

    /// The elements sorted by `keyPath`, as live Results.
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Element> {
        results().sorted(byKeyPath: keyPath, ascending: ascending)
    }

    /// The first element of each distinct value of the key paths, as live Results.
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String { results().distinct(by: keyPaths) }
}

extension MutableSet where Element: Object {
    /// The smallest value of `property` among the set's objects (numbers and dates); nil when
    /// the set is empty. Stops the program for a property of another type.
    public func min<T: _PersistableValue>(ofProperty property: String) -> T? {
        aggregate("min", property) { (r) throws(CoveError) in try r.min(ofProperty: property) }
    }

    /// The greatest value of `property` among the set's objects; nil when the set is empty.
    public func max<T: _PersistableValue>(ofProperty property: String) -> T? {
        aggregate("max", property) { (r) throws(CoveError) in try r.max(ofProperty: property) }
    }

    /// The sum of `property` over the set's objects (zero when the set is empty).
    public func sum<T: _PersistableValue>(ofProperty property: String) -> T {
        guard let total: T = aggregate("sum", property, { (r) throws(CoveError) in try r.sum(ofProperty: property) }) else {
            preconditionFailure("MutableSet.sum(ofProperty: \(property)): no sum")
        }
        return total
    }

    /// The mean of `property` over the set's objects; nil when the set is empty.
    public func average<T: _PersistableValue>(ofProperty property: String) -> T? {
        aggregate("average", property) { (r) throws(CoveError) in try r.average(ofProperty: property) }
    }

    private func aggregate<T: _PersistableValue>(_ name: String, _ property: String,
                                                 _ compute: (Results<Element>) throws(CoveError) -> Value?) -> T? {
        do {
            guard let value = try compute(results()), value != .null else { return nil }
            return try T._coveRead(value, managed?.realm)
        } catch {
            managedFailure("MutableSet.\(name)(ofProperty: \(property))", error)
        }
    }
}
