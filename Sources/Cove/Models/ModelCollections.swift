// List, MutableSet, Map and LinkingObjects: the typed collections of model classes, after
// realm-swift's types of the same names. Unmanaged, each is a plain Swift collection; managed,
// each reads and writes the realm through the dynamic API's list, set or map.
import CoveCore

/// Traps with the reason of a failed managed access (realm-swift's semantics for programming
/// errors such as a write outside a write transaction).
@inline(never)
func managedFailure(_ what: String, _ error: CoveError) -> Never {
    preconditionFailure("\(what): \(error.message)")
}

/// An ordered list of values or objects: `@Persisted var toys: List<Toy>`.
public final class List<Element: _PersistableValue>: RandomAccessCollection, CustomStringConvertible {
    var unmanaged: [Element] = []
    var managed: DynamicList?
    /// Set on the list a recording object reads (Projection.swift).
    var recorder: _KeyPathRecorder?

    /// An empty, unmanaged list.
    public init() {}

    init(managed: DynamicList) { self.managed = managed }

    /// The realm of a managed list.
    public var realm: Realm? { managed?.realm }

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    /// The number of elements.
    public var count: Int {
        guard let managed else { return unmanaged.count }
        do { return try managed.count } catch { managedFailure("List.count", error) }
    }

    /// The element at `index`; assigning replaces it (inside a write, when managed).
    public subscript(index: Int) -> Element {
        get {
            guard let managed else { return unmanaged[index] }
            do { return try Element._coveRead(try managed.value(at: index), managed.realm) } catch { managedFailure("List[\(index)]", error) }
        }
        set {
            guard let managed else { unmanaged[index] = newValue; return }
            do {
                if let embedded = newValue as? EmbeddedObject {
                    try managed.remove(at: index)
                    try embedded._coveAdopt(try managed.insertEmbedded(at: index))
                } else {
                    try managed.replace(index: index, with: try newValue._coveWrite(managed.realm))
                }
            } catch {
                managedFailure("List[\(index)] =", error)
            }
        }
    }

    /// Adds `element` at the end.
    public func append(_ element: Element) { insert(element, at: count) }

    /// Adds every element of `elements` at the end.
    public func append<S: Sequence>(contentsOf elements: S) where S.Element == Element {
        for e in elements { append(e) }
    }

    /// Inserts `element` at `index`.
    public func insert(_ element: Element, at index: Int) {
        guard let managed else { unmanaged.insert(element, at: index); return }
        do {
            if let embedded = element as? EmbeddedObject {
                try embedded._coveAdopt(try managed.insertEmbedded(at: index))
            } else {
                try managed.insert(try element._coveWrite(managed.realm), at: index)
            }
        } catch {
            managedFailure("List.insert", error)
        }
    }

    /// Removes the element at `index`.
    public func remove(at index: Int) {
        guard let managed else { unmanaged.remove(at: index); return }
        do { try managed.remove(at: index) } catch { managedFailure("List.remove(at:)", error) }
    }

    /// Moves the element at `from` to `to`.
    public func move(from: Int, to: Int) {
        guard let managed else { unmanaged.insert(unmanaged.remove(at: from), at: to); return }
        do { try managed.move(from: from, to: to) } catch { managedFailure("List.move", error) }
    }

    /// Removes every element.
    public func removeAll() {
        guard let managed else { unmanaged.removeAll(); return }
        do { try managed.removeAll() } catch { managedFailure("List.removeAll", error) }
    }

    public var description: String { "List<\(Element.self)>\(Array(self))" }
}

extension List: _PersistableProperty {
    public static var _coveCollection: CollectionKind { .list }
    public static var _coveType: PropertyType { Element._coveType }
    public static var _coveOptional: Bool { Element._coveOptional && !(Element._coveType.objectClassName != nil) }
    public static func _coveDefault() -> List<Element> { List() }
    public static func _coveRecording(_ recorder: _KeyPathRecorder) -> List<Element>? {
        let list = List()
        list.recorder = recorder
        return list
    }
    public static func _coveGet(_ object: DynamicObject, _ name: String) throws(CoveError) -> List<Element> {
        List(managed: try object.dynamicList(name))
    }
    public static func _coveSet(_ value: List<Element>, _ object: DynamicObject, _ name: String) throws(CoveError) {
        let target = List(managed: try object.dynamicList(name))
        if target.managed?.owner === value.managed?.owner && value.managed?.property.name == name { return }
        let elements = Array(value)
        target.removeAll()
        target.append(contentsOf: elements)
    }
}

/// A set of distinct values or objects: `@Persisted var tags: MutableSet<String>`.
public final class MutableSet<Element: _PersistableValue & Hashable>: RandomAccessCollection, CustomStringConvertible {
    var unmanaged: Set<Element> = []
    var managed: DynamicSet?
    /// Set on the set a recording object reads (Projection.swift).
    var recorder: _KeyPathRecorder?

    /// An empty, unmanaged set.
    public init() {}

    init(managed: DynamicSet) { self.managed = managed }

    /// The number of elements.
    public var count: Int {
        guard let managed else { return unmanaged.count }
        do { return try managed.count } catch { managedFailure("MutableSet.count", error) }
    }

    /// The elements: in value order when managed.
    public var elements: [Element] {
        guard let managed else { return Array(unmanaged) }
        do { return try managed.values().map { (v) throws(CoveError) in try Element._coveRead(v, managed.realm) } } catch { managedFailure("MutableSet", error) }
    }

    public func makeIterator() -> IndexingIterator<[Element]> { elements.makeIterator() }

    /// 0.
    public var startIndex: Int { 0 }
    /// The number of elements.
    public var endIndex: Int { count }

    /// The element at `position` in the set's order (value order when managed).
    public subscript(position: Int) -> Element { element(at: position) }

    /// The element at `index` in the set's order (value order when managed).
    func element(at index: Int) -> Element {
        guard let managed else { return Array(unmanaged)[index] }
        do { return try Element._coveRead(try managed.value(at: index), managed.realm) } catch { managedFailure("MutableSet[\(index)]", error) }
    }

    /// Whether the set holds `element`.
    public func contains(_ element: Element) -> Bool {
        guard let managed else { return unmanaged.contains(element) }
        do { return try managed.contains(try element._coveWrite(managed.realm)) } catch { managedFailure("MutableSet.contains", error) }
    }

    /// Adds `element` (nothing happens when it is there).
    public func insert(_ element: Element) {
        guard let managed else { unmanaged.insert(element); return }
        do { try managed.insert(try element._coveWrite(managed.realm)) } catch { managedFailure("MutableSet.insert", error) }
    }

    /// Removes `element` if it is there.
    public func remove(_ element: Element) {
        guard let managed else { unmanaged.remove(element); return }
        do { try managed.remove(try element._coveWrite(managed.realm)) } catch { managedFailure("MutableSet.remove", error) }
    }

    /// Removes every element.
    public func removeAll() {
        guard let managed else { unmanaged.removeAll(); return }
        do { try managed.removeAll() } catch { managedFailure("MutableSet.removeAll", error) }
    }

    /// Adds every element of `objects`.
    public func insert<S: Sequence>(objectsIn objects: S) where S.Element == Element { for e in objects { insert(e) } }
    /// Adds every element of `other` (realm-swift's `formUnion`, RLMSet's `union`).
    public func formUnion(_ other: MutableSet<Element>) { for e in other.elements { insert(e) } }
    /// Keeps the elements also in `other` (RLMSet's `intersect`).
    public func formIntersection(_ other: MutableSet<Element>) { for e in elements where !other.contains(e) { remove(e) } }
    /// Removes the elements of `other` (RLMSet's `minus`).
    public func subtract(_ other: MutableSet<Element>) { for e in other.elements { remove(e) } }
    /// Makes the set hold exactly the elements of `other` (RLMSet's `setSet`).
    public func setSet(_ other: MutableSet<Element>) {
        let wanted = other.elements
        for e in elements where !wanted.contains(e) { remove(e) }
        for e in wanted { insert(e) }
    }
    /// Whether the sets share an element.
    public func intersects(_ other: MutableSet<Element>) -> Bool { elements.contains { other.contains($0) } }
    /// Whether every element is in `other`.
    public func isSubset(of other: MutableSet<Element>) -> Bool { elements.allSatisfy { other.contains($0) } }
    /// Whether both sets hold the same elements (RLMSet's `isEqual(to:)`).
    public func isEqual(to other: MutableSet<Element>) -> Bool { count == other.count && isSubset(of: other) }

    /// The smallest element (numbers and dates); nil when empty.
    public func min() -> Element? { extreme(largest: false) }
    /// The greatest element (numbers and dates); nil when empty.
    public func max() -> Element? { extreme(largest: true) }

    /// The sum of the elements (numbers).
    public func sum() -> Element {
        do {
            let total = try CollectionAggregates.sum(try values(), of: "MutableSet<\(Element.self)>", elementType: Element._coveType)
            return try Element._coveRead(total, managed?.realm)
        } catch {
            managedFailure("MutableSet.sum", error)
        }
    }

    /// The mean of the elements (numbers); nil when empty.
    public func average() -> Double? {
        do {
            switch try CollectionAggregates.average(try values(), of: "MutableSet<\(Element.self)>") {
            case .double(let d)?: return d
            case .decimal128(let d)?: return d.doubleValue
            default: return nil
            }
        } catch {
            managedFailure("MutableSet.average", error)
        }
    }

    private func values() throws(CoveError) -> [Value] {
        if let managed { return try managed.values() }
        return try elements.map { (e) throws(CoveError) in try e._coveWrite(nil) }
    }

    private func extreme(largest: Bool) -> Element? {
        do {
            let elements = self.elements
            let values = try elements.map { (e) throws(CoveError) in try e._coveWrite(managed?.realm) }
            guard let best = try CollectionAggregates.extreme(values, largest: largest, of: "MutableSet<\(Element.self)>"),
                  let i = values.firstIndex(of: best) else { return nil }
            return elements[i]
        } catch {
            managedFailure(largest ? "MutableSet.max" : "MutableSet.min", error)
        }
    }

    public var description: String { "MutableSet<\(Element.self)>\(elements)" }
}

extension MutableSet: _PersistableProperty {
    public static var _coveCollection: CollectionKind { .set }
    public static var _coveType: PropertyType { Element._coveType }
    public static var _coveOptional: Bool { Element._coveOptional && Element._coveType.objectClassName == nil }
    public static func _coveDefault() -> MutableSet<Element> { MutableSet() }
    public static func _coveRecording(_ recorder: _KeyPathRecorder) -> MutableSet<Element>? {
        let set = MutableSet()
        set.recorder = recorder
        return set
    }
    public static func _coveGet(_ object: DynamicObject, _ name: String) throws(CoveError) -> MutableSet<Element> {
        MutableSet(managed: try object.dynamicMutableSet(name))
    }
    public static func _coveSet(_ value: MutableSet<Element>, _ object: DynamicObject, _ name: String) throws(CoveError) {
        let target = MutableSet(managed: try object.dynamicMutableSet(name))
        let elements = value.elements
        target.removeAll()
        for e in elements { target.insert(e) }
    }
}

/// A map from string keys to values or objects: `@Persisted var scores: Map<String, Double>`.
public final class Map<Key: _MapKey, Value: _PersistableValue>: CustomStringConvertible {
    var unmanaged: [String: Value] = [:]
    var managed: DynamicMap?

    /// An empty, unmanaged map.
    public init() {}

    init(managed: DynamicMap) { self.managed = managed }

    /// The number of entries.
    public var count: Int {
        guard let managed else { return unmanaged.count }
        do { return try managed.count } catch { managedFailure("Map.count", error) }
    }

    /// The keys, in order (sorted by their UTF-8 bytes).
    public var keys: [String] {
        guard let managed else { return unmanaged.keys.sorted() }
        do { return try managed.keys() } catch { managedFailure("Map.keys", error) }
    }

    /// The value of `key`, nil when absent; assigning nil removes the entry.
    public subscript(key: String) -> Value? {
        get {
            guard let managed else { return unmanaged[key] }
            do {
                guard let v = try managed.value(forKey: key) else { return nil }
                return try Value._coveRead(v, managed.realm)
            } catch {
                managedFailure("Map[\(key)]", error)
            }
        }
        set {
            guard let managed else { unmanaged[key] = newValue; return }
            do {
                guard let newValue else { try managed.removeValue(forKey: key); return }
                if let embedded = newValue as? EmbeddedObject {
                    try embedded._coveAdopt(try managed.setEmbedded(forKey: key))
                } else {
                    try managed.setValue(try newValue._coveWrite(managed.realm), forKey: key)
                }
            } catch {
                managedFailure("Map[\(key)] =", error)
            }
        }
    }

    /// Removes every entry.
    public func removeAll() {
        guard let managed else { unmanaged.removeAll(); return }
        do { try managed.removeAll() } catch { managedFailure("Map.removeAll", error) }
    }

    public var description: String { "Map<String, \(Value.self)>[" + keys.map { "\($0): \(self[$0].map { "\($0)" } ?? "nil")" }.joined(separator: ", ") + "]" }
}

/// The key type of maps: String.
public protocol _MapKey {}
extension String: _MapKey {}

extension Map: _PersistableProperty {
    public static var _coveCollection: CollectionKind { .map }
    public static var _coveType: PropertyType { Value._coveType }
    public static var _coveOptional: Bool { Value._coveOptional }
    public static func _coveDefault() -> Map<Key, Value> { Map() }
    public static func _coveGet(_ object: DynamicObject, _ name: String) throws(CoveError) -> Map<Key, Value> {
        Map(managed: try object.dynamicMap(name))
    }
    public static func _coveSet(_ value: Map<Key, Value>, _ object: DynamicObject, _ name: String) throws(CoveError) {
        let target = Map<Key, Value>(managed: try object.dynamicMap(name))
        let entries = value.keys.map { ($0, value[$0]) }
        target.removeAll()
        for (k, v) in entries { target[k] = v }
    }
}

/// Backlinks: `@Persisted(originProperty: "dogs") var owners: LinkingObjects<Person>`, the objects
/// of `Origin` whose property links to this object, one per link (an object whose list holds
/// this one twice is there twice), as Realm counts them. Computed; empty while unmanaged.
public final class LinkingObjects<Origin: Object>: RandomAccessCollection {
    let originProperty: String
    var owner: DynamicObject?
    var name = ""

    init(originProperty: String) { self.originProperty = originProperty }

    private var objects: [Origin] {
        guard let owner else { return [] }
        do {
            return try owner.linkingObjects(name).compactMap { ModelRegistry.make($0) as? Origin }
        } catch {
            managedFailure("LinkingObjects", error)
        }
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { objects.count }
    public subscript(index: Int) -> Origin { objects[index] }
}

extension LinkingObjects: _PersistableProperty {
    public static var _coveCollection: CollectionKind { .none }
    public static var _coveType: PropertyType { .object(Origin.className) }
    public static var _coveOptional: Bool { false }
    public static func _coveDefault() -> LinkingObjects<Origin> { LinkingObjects(originProperty: "") }
    public static func _coveGet(_ object: DynamicObject, _ name: String) throws(CoveError) -> LinkingObjects<Origin> {
        let property = try ObjectStore.property(name, of: object.objectSchema)
        guard case .linkingObjects(_, let origin) = property.type else {
            throw CoveError(.wrongType, "property '\(name)' of class '\(object.objectSchema.className)' is not backlinks")
        }
        let links = LinkingObjects(originProperty: origin)
        links.owner = object
        links.name = name
        return links
    }
    public static func _coveSet(_ value: LinkingObjects<Origin>, _ object: DynamicObject, _ name: String) throws(CoveError) {
        throw CoveError(.invalidArgument, "property '\(name)' of class '\(object.objectSchema.className)' is backlinks: it is computed")
    }
}
