// @Persisted: the property wrapper of model properties. It holds the value while the object is
// unmanaged; once the object is managed, its box knows the owner and the property's name, and
// every read and write goes to the realm (realm-swift's semantics: a failed managed access,
// such as a write outside a write transaction, is a programming error and traps with the
// reason).
import CoveCore

/// A stored property of a model class: `@Persisted var name = ""`,
/// `@Persisted(primaryKey: true) var id = 0`, `@Persisted(indexed: true) var age = 0`,
/// `@Persisted var toys: List<Toy>`, `@Persisted(originProperty: "dogs") var owners: LinkingObjects<Person>`.
@propertyWrapper
public struct Persisted<Value: _PersistableProperty> {
    let box: PersistedBox<Value>

    /// A property with an initial value.
    public init(wrappedValue: Value) {
        box = PersistedBox(wrappedValue, primaryKey: false, indexed: false)
    }

    /// A property with its type's default (0, "", nil, an empty collection).
    public init() {
        box = PersistedBox(Value._coveDefault(), primaryKey: false, indexed: false)
    }

    /// A primary-key or indexed property with an initial value.
    public init(wrappedValue: Value, primaryKey: Bool = false, indexed: Bool = false) {
        box = PersistedBox(wrappedValue, primaryKey: primaryKey, indexed: indexed)
    }

    /// A primary-key or indexed property with its type's default.
    public init(primaryKey: Bool = false, indexed: Bool = false) {
        box = PersistedBox(Value._coveDefault(), primaryKey: primaryKey, indexed: indexed)
    }

    /// The value: the realm's, once the object is managed.
    public var wrappedValue: Value {
        get { box.get() }
        nonmutating set { box.set(newValue) }
    }
}

extension Persisted {
    /// Backlinks: the objects of `Origin` whose property `originProperty` links here.
    public init<Origin>(originProperty: String) where Value == LinkingObjects<Origin> {
        box = PersistedBox(LinkingObjects<Origin>(originProperty: originProperty), primaryKey: false, indexed: false)
        box.originProperty = originProperty
    }
}

/// What schema discovery and binding need of any @Persisted property.
protocol _AnyPersisted {
    func _coveProperty(_ name: String) -> Property
    func _coveBind(_ owner: Object, _ name: String)
    func _coveCopy(into managed: DynamicObject, _ name: String) throws(CoveError)
    var _coveDescription: String { get }
    /// The unmanaged value as a `Value` (a primary key's, for `add`).
    func _coveValue(_ realm: Realm) throws(CoveError) -> Cove.Value
}

extension Persisted: _AnyPersisted {
    func _coveProperty(_ name: String) -> Property {
        if let origin = box.originProperty, case .object(let cls) = Value._coveType {
            return Property(name: name, type: .linkingObjects(cls, property: origin))
        }
        return Property(name: name, type: Value._coveType, collection: Value._coveCollection,
                        isOptional: Value._coveOptional, isIndexed: box.indexed, isPrimaryKey: box.primaryKey)
    }

    func _coveBind(_ owner: Object, _ name: String) {
        box.owner = owner
        box.name = name
        box.cachedCollection = nil
    }

    func _coveCopy(into managed: DynamicObject, _ name: String) throws(CoveError) {
        if box.originProperty != nil { return }
        try Value._coveSet(box.value, managed, name)
    }

    var _coveDescription: String { "\(box.value)" }

    func _coveValue(_ realm: Realm) throws(CoveError) -> Cove.Value {
        guard let value = box.value as? any _PersistableValue else {
            throw CoveError(.wrongType, "a \(Value.self) is not a single value")
        }
        return try value._coveWrite(realm)
    }
}

/// The storage of one @Persisted property; a class, so that Mirror's copy of the wrapper reaches
/// the same box the object holds.
final class PersistedBox<Value: _PersistableProperty> {
    var value: Value
    let primaryKey: Bool
    let indexed: Bool
    var originProperty: String?
    weak var owner: Object?
    var name = ""
    /// A managed collection handed out before (lists, sets and maps are reference types).
    var cachedCollection: Value?

    init(_ value: Value, primaryKey: Bool, indexed: Bool) {
        self.value = value
        self.primaryKey = primaryKey
        self.indexed = indexed
    }

    func get() -> Value {
        guard let managed = owner?.dynamicObject else {
            guard let recorder = owner?.keyPathRecorder else { return value }
            recorder.names.append(name)
            return Value._coveRecording(recorder) ?? value
        }
        if let cachedCollection { return cachedCollection }
        do {
            let v = try Value._coveGet(managed, name)
            if Value._coveCollection != .none || originProperty != nil { cachedCollection = v }
            return v
        } catch {
            preconditionFailure("reading '\(name)' of \(managed.objectSchema.className): \(error.message)")
        }
    }

    func set(_ newValue: Value) {
        guard let managed = owner?.dynamicObject else {
            value = newValue
            return
        }
        do {
            try Value._coveSet(newValue, managed, name)
        } catch {
            preconditionFailure("writing '\(name)' of \(managed.objectSchema.className): \(error.message)")
        }
    }
}
