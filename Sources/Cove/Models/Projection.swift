// Typed projections, as realm-swift declares them:
//
//     final class PersonView: Projection<Person> {
//         @Projected(\Person.firstName) var name
//         @Projected(\Person.friends.projectTo.firstName) var friendNames: ProjectedCollection<String>
//         @Projected(\Person.age, transform: { "\($0) years" }) var ageText: String
//     }
//
// Reads evaluate the Swift key path on the root object; writes go through a writable key path.
// Observing needs the key paths as property names: Linux has no Objective-C runtime to ask, so a
// key path is run once on a recording instance of the root class, whose @Persisted properties
// note their names as they are read (a link gives a recording instance of its class, a list or
// set a recording collection whose `projectTo` goes on recording).

import CoveCore
import Synchronization

/// Collects the property names a key path reads on a recording object.
public final class _KeyPathRecorder {
    var names: [String] = []
    /// The recording objects made on the way (properties hold their owners weakly).
    var retained: [Object] = []

    init() {}

    /// The dotted key path that `read` reads from a recording `Root`; nil when it reads no
    /// @Persisted property.
    static func path<Root: Object>(of read: (Root) -> Void, from root: Root.Type) -> String? {
        let recorder = _KeyPathRecorder()
        guard let instance = Root._coveRecording(recorder) else { return nil }
        read(instance)
        return recorder.names.isEmpty ? nil : recorder.names.joined(separator: ".")
    }

    /// The dotted property names of Swift key paths of `Root` (`\Dog.name`, `\Dog.owner.name`),
    /// for observers that take key paths.
    /// - Throws: `.invalidArgument` for a key path that reads no @Persisted property.
    static func paths<Root: Object>(_ keyPaths: [PartialKeyPath<Root>], of root: Root.Type) throws(CoveError) -> [String] {
        try keyPaths.map { (keyPath) throws(CoveError) -> String in
            guard let name = path(of: { _ = $0[keyPath: keyPath] }, from: root) else {
                throw CoveError(.invalidArgument, "key path \(keyPath) of \(Root.className) reads no persisted property")
            }
            return name
        }
    }
}

/// A view of a model object under other names: subclass it and declare its properties with
/// `@Projected`. Reads go through to the root object, writes to plain projected properties go
/// through inside a write, and `observe` reports changes under the projected names.
open class Projection<Root: Object>: CustomStringConvertible {
    /// The projected object.
    public let rootObject: Root

    /// A projection of `object` (managed, to observe it).
    public required init(projecting object: Root) {
        rootObject = object
    }

    /// The realm of the root object; nil while it is unmanaged.
    public var realm: Realm? { rootObject.realm }

    /// Whether the root object was deleted.
    public var isInvalidated: Bool { rootObject.isInvalidated }

    /// Whether the root object belongs to a frozen realm.
    public var isFrozen: Bool { rootObject.realm?.isFrozen ?? false }

    /// The projected properties of this class: their names and the root's key paths.
    /// - Throws: `.invalidArgument` for a @Projected key path that reads no @Persisted property.
    public class func projectedProperties() throws(CoveError) -> [(name: String, keyPath: String)] {
        try ProjectionFields.of(self).map { (name: $0.name, keyPath: $0.keyPath) }
    }

    /// Calls `block` after each commit that changed what a projected property reads (or, with
    /// `keyPaths`, those projected properties only), with projected names and the old and new
    /// values as `Value`s (nil for collections and for transforms whose type is not a stored
    /// one); the root's deletion is reported once. No initial call.
    /// - Throws: `.invalidArgument` (an unmanaged root, or a name this projection does not
    ///   declare), `.frozen`, `.inWrite`, `.invalidated`.
    public func observeChanges(keyPaths: [String]? = nil, _ block: @escaping (ObjectChange<Projection<Root>>) -> Void) throws(CoveError) -> NotificationToken {
        guard let root = rootObject.dynamicObject else {
            throw CoveError(.invalidArgument, "a projection of an unmanaged \(Root.className) cannot be observed")
        }
        let fields = try ProjectionFields.of(type(of: self))
        var watched: [ProjectionRegistration.Watched] = []
        for name in keyPaths ?? fields.map(\.name) {
            guard let f = fields.first(where: { $0.name == name }) else {
                throw CoveError(.invalidArgument, "\(type(of: self)) projects no property '\(name)'")
            }
            let rootObject = self.rootObject
            watched.append(.init(name: name, keyPath: f.keyPath,
                                 read: f.isCollection ? nil : { () throws(CoveError) in f.value(rootObject) ?? .null }))
        }
        return try ProjectionRegistration.observeChanges(root, watched) { block($0.map { _ in self }) }
    }

    /// A frozen projection of the frozen root object.
    /// - Throws: what `Object.freeze()` throws.
    public func checkedFreeze() throws(CoveError) -> Self {
        Self(projecting: try rootObject.freeze())
    }

    /// The projection of the root object in `live`; nil when it was deleted since.
    public func thaw(in live: Realm) throws(CoveError) -> Self? {
        try rootObject.thaw(in: live).map { Self(projecting: $0) }
    }

    public var description: String {
        let fields = (try? ProjectionFields.of(type(of: self))) ?? []
        let shown = fields.map { f in "\(f.name) = \(f.describe(rootObject))" }
        return "\(type(of: self))<\(Root.className)> { \(shown.joined(separator: "; ")) }"
    }
}

extension Projection: RealmCollectionValue {
    public static func _fromResultsValue(_ value: Value, _ realm: Realm) throws(CoveError) -> Self {
        Self(projecting: try Root._fromResultsValue(value, realm))
    }
}

extension Realm {
    /// Every object of the projection's root class, each seen through the projection, as live,
    /// lazy Results (queries and sorts name the root's properties). As `objects(_:)` of a
    /// class, it does not throw: a root class the schema lacks is the results' error.
    public func objects<Root: Object, P: Projection<Root>>(_ type: P.Type) -> Results<P> {
        Results(engine: objects(Root.self).engine)
    }
}

/// A projected property: `@Projected(\Person.firstName) var name`, optionally transformed
/// (`@Projected(\Person.age, transform: { "\($0)" }) var ageText: String`). Readable always;
/// assignable when the key path is writable and there is no transform.
@propertyWrapper
public struct Projected<Root: Object, Value> {
    let field: ProjectedField<Root>
    let read: (Root) -> Value
    let write: ((Root, Value) -> Void)?

    /// A property read from `keyPath` of the root.
    public init(_ keyPath: KeyPath<Root, Value>) {
        let writable = keyPath as? ReferenceWritableKeyPath<Root, Value>
        self.init(keyPath, read: { $0[keyPath: keyPath] }, write: writable.map { w in { $0[keyPath: w] = $1 } })
    }

    /// A computed property: `transform` of what `keyPath` reads.
    public init<Source>(_ keyPath: KeyPath<Root, Source>, transform: @escaping (Source) -> Value) {
        self.init(keyPath, read: { transform($0[keyPath: keyPath]) }, write: nil)
    }

    private init<Source>(_ keyPath: KeyPath<Root, Source>, read: @escaping (Root) -> Value, write: ((Root, Value) -> Void)?) {
        self.read = read
        self.write = write
        field = ProjectedField(keyPath: keyPath, read: read)
    }

    /// Only reachable through the enclosing projection.
    @available(*, unavailable, message: "@Projected can only be used in a Projection subclass")
    public var wrappedValue: Value {
        get { preconditionFailure("@Projected is read through its projection") }
        // swiftlint:disable:next unused_setter_value
        set { preconditionFailure("@Projected is written through its projection") }
    }

    public static subscript<P: Projection<Root>>(_enclosingInstance projection: P,
                                                 wrapped wrappedKeyPath: ReferenceWritableKeyPath<P, Value>,
                                                 storage storageKeyPath: ReferenceWritableKeyPath<P, Self>) -> Value {
        get { projection[keyPath: storageKeyPath].read(projection.rootObject) }
        set {
            guard let write = projection[keyPath: storageKeyPath].write else {
                preconditionFailure("a projected property read through a transform or a read-only key path cannot be assigned")
            }
            write(projection.rootObject, newValue)
        }
    }
}

/// What observing needs of a @Projected property, with its type erased. Nothing here runs when
/// a projection is made: the key path is recorded once per projection class (ProjectionFields).
struct ProjectedField<Root: Object> {
    /// Records the root's key path as property names; nil when it reads no @Persisted property.
    let recordPath: () -> String?
    let isCollection: Bool
    let readAny: (Root) -> Any

    init<Source, V>(keyPath: KeyPath<Root, Source>, read: @escaping (Root) -> V) {
        recordPath = { _KeyPathRecorder.path(of: { _ = $0[keyPath: keyPath] }, from: Root.self) }
        isCollection = V.self is any _ProjectedCollectionType.Type
            || (V.self as? any _PersistableProperty.Type).map { $0._coveCollection != .none } ?? false
        readAny = read
    }
}

/// The projected properties of one projection class, found once with Mirror.
struct ProjectionFields<Root: Object> {
    struct Field {
        let name: String
        let keyPath: String
        let isCollection: Bool
        let read: (Root) -> Any

        /// The value as a `Value`, when its type is a stored one.
        func value(_ root: Root) -> Value? {
            guard let v = read(root) as? any _PersistableValue else { return nil }
            return try? v._coveWrite(root.realm)
        }

        func describe(_ root: Root) -> String {
            if let c = read(root) as? any _ProjectedCollectionType { return c._description }
            return "\(read(root))"
        }
    }

    static func of(_ type: Projection<Root>.Type) throws(CoveError) -> [Field] {
        if let found = projectionFieldCache.withLock({ $0[ObjectIdentifier(type)] })?.fields as? [Field] { return found }
        let sample = type.init(projecting: Root())
        var fields: [Field] = []
        var mirror: Mirror? = Mirror(reflecting: sample)
        var mirrors: [Mirror] = []
        while let m = mirror {
            mirrors.append(m)
            mirror = m.superclassMirror
        }
        for m in mirrors.reversed() {
            for child in m.children {
                guard let label = child.label, let projected = child.value as? any _AnyProjected<Root> else { continue }
                let name = label.hasPrefix("_") ? String(label.dropFirst()) : label
                let field = projected._field
                guard let path = field.recordPath() else {
                    throw CoveError(.invalidArgument, "projected property '\(name)' of \(type) reads no @Persisted property of \(Root.className)")
                }
                fields.append(Field(name: name, keyPath: path, isCollection: field.isCollection, read: field.readAny))
            }
        }
        let table = FieldTable(fields)
        projectionFieldCache.withLock { $0[ObjectIdentifier(type)] = table }
        return fields
    }
}

/// The fields of one projection class, shared by every thread: immutable once built, and their
/// closures only apply key paths.
private final class FieldTable: @unchecked Sendable {
    let fields: Any
    init(_ fields: Any) { self.fields = fields }
}

private let projectionFieldCache = Mutex<[ObjectIdentifier: FieldTable]>([:])

/// A @Projected property, whatever its value type.
protocol _AnyProjected<Root> {
    associatedtype Root: Object
    var _field: ProjectedField<Root> { get }
}

extension Projected: _AnyProjected {
    var _field: ProjectedField<Root> { field }
}

// MARK: Collections of projected values

/// `list.projectTo.firstName`: the values one key path reads from each element of a list or set
/// of objects, as a live collection.
@dynamicMemberLookup
public struct ElementMapper<Element: Object> {
    let recorder: _KeyPathRecorder?
    let count: () -> Int
    let element: (Int) -> Element

    /// The values `keyPath` reads from each element, in the collection's order.
    public subscript<V>(dynamicMember keyPath: KeyPath<Element, V>) -> ProjectedCollection<V> {
        if let recorder, let instance = Element._coveRecording(recorder) {
            _ = instance[keyPath: keyPath]
            return ProjectedCollection(count: { 0 }, element: { _ in preconditionFailure("a recording collection has no elements") })
        }
        let element = self.element
        return ProjectedCollection(count: count, element: { element($0)[keyPath: keyPath] })
    }
}

/// What projections need to know of a projected collection without its element type.
protocol _ProjectedCollectionType {
    var _description: String { get }
}

/// The values a key path reads from each element of a list or set (`friends.projectTo.firstName`),
/// read when accessed, so always current.
public struct ProjectedCollection<Element>: RandomAccessCollection, CustomStringConvertible, _ProjectedCollectionType {
    let countOf: () -> Int
    let elementAt: (Int) -> Element

    init(count: @escaping () -> Int, element: @escaping (Int) -> Element) {
        countOf = count
        elementAt = element
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { countOf() }
    public subscript(index: Int) -> Element { elementAt(index) }

    public var description: String { "\(Array(self))" }
    var _description: String { description }
}

extension List where Element: Object {
    /// The values of one property of each element: `person.friends.projectTo.firstName`.
    public var projectTo: ElementMapper<Element> {
        ElementMapper(recorder: recorder, count: { self.count }, element: { self[$0] })
    }
}

extension LinkingObjects: _ProjectedCollectionType {
    var _description: String { "\(Array(self))" }
}

extension MutableSet where Element: Object {
    /// The values of one property of each element, in the set's order.
    public var projectTo: ElementMapper<Element> {
        ElementMapper(recorder: recorder, count: { self.count }, element: { self.element(at: $0) })
    }
}
