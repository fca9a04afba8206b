// Object and EmbeddedObject: model classes declared as realm-swift declares them. The schema of
// a class comes from its @Persisted properties, found with Mirror on a fresh instance (Linux has
// no Objective-C runtime); a managed object's properties read and write through to the realm.
import CoveCore
import Synchronization

/// The base class of model classes:
///
///     final class Dog: Object {
///         @Persisted(primaryKey: true) var id = 0
///         @Persisted var name = ""
///         @Persisted var toys: List<Toy>
///     }
///
/// An object made with `init()` is unmanaged: a plain Swift object until `realm.add(_:)`, after
/// which every property reads and writes the realm's current version.
open class Object: CustomStringConvertible {
    /// The realm's object behind this one once it is managed.
    public internal(set) var dynamicObject: DynamicObject?
    /// Set on an unmanaged instance that records the names a Swift key path reads.
    var keyPathRecorder: _KeyPathRecorder?

    public required init() {}

    /// The class name in the schema: the Swift class name.
    open class var className: String { String(describing: self) }

    /// The realm a managed object belongs to; nil while unmanaged.
    public var realm: Realm? { dynamicObject?.realm }

    /// Whether the object was deleted from its realm (false while unmanaged).
    public var isInvalidated: Bool { dynamicObject?.isInvalidated ?? false }

    /// The value of a property by name, through the dynamic API (managed objects only).
    public subscript(name: String) -> Value {
        get throws(CoveError) {
            guard let dynamicObject else { throw CoveError(.invalidArgument, "an unmanaged \(Self.className) has no stored values") }
            return try dynamicObject.value(forKey: name)
        }
    }

    // MARK: Properties found by Mirror

    /// The @Persisted properties of this instance, with their names, superclasses' first.
    func persistedProperties() -> [(name: String, property: any _AnyPersisted)] {
        var mirrors: [Mirror] = []
        var mirror: Mirror? = Mirror(reflecting: self)
        while let m = mirror {
            mirrors.append(m)
            mirror = m.superclassMirror
        }
        var out: [(name: String, property: any _AnyPersisted)] = []
        for m in mirrors.reversed() {
            for child in m.children {
                guard let label = child.label, let persisted = child.value as? any _AnyPersisted else { continue }
                out.append((label.hasPrefix("_") ? String(label.dropFirst()) : label, persisted))
            }
        }
        return out
    }

    /// Makes this instance the face of `managed`: its properties read and write the realm.
    func bind(_ managed: DynamicObject) {
        dynamicObject = managed
        for (name, property) in persistedProperties() { property._coveBind(self, name) }
    }

    /// Copies this unmanaged object's values into `managed` (the primary key excepted) and binds
    /// it. Linked unmanaged objects are added too.
    func adopt(_ managed: DynamicObject, skipping primaryKey: String?) throws(CoveError) {
        for (name, property) in persistedProperties() where name != primaryKey {
            try property._coveCopy(into: managed, name)
        }
        bind(managed)
    }

    public var description: String {
        if let dynamicObject { return dynamicObject.description }
        let fields = persistedProperties().map { "\($0.name) = \($0.property._coveDescription)" }
        return "\(Self.className) (unmanaged) { \(fields.joined(separator: "; ")) }"
    }
}

/// An object owned by exactly one parent (through a link, a list or a map), created with it and
/// deleted with it; it has no primary key and cannot be added to a realm alone.
open class EmbeddedObject: Object {
    func _coveAdopt(_ managed: DynamicObject) throws(CoveError) {
        if dynamicObject != nil {
            throw CoveError(.invalidArgument, "the embedded \(Self.className) already has a parent: assign a new, unmanaged one")
        }
        try adopt(managed, skipping: nil)
    }
}

/// Two model objects are equal when they are the same instance, or managed faces of the same
/// object of the same realm (realm-swift's equality), so objects can be set elements.
extension Object: Hashable {
    public static func == (lhs: Object, rhs: Object) -> Bool {
        if lhs === rhs { return true }
        guard let l = lhs.dynamicObject, let r = rhs.dynamicObject else { return false }
        return l.realm === r.realm && l.link == r.link
    }

    public func hash(into hasher: inout Hasher) {
        if let dynamicObject {
            hasher.combine(dynamicObject.link)
        } else {
            hasher.combine(ObjectIdentifier(self))
        }
    }
}

extension Object: _PersistableProperty {}

extension Object: _PersistableValue {
    public static var _coveType: PropertyType { .object(className) }
    public static var _coveOptional: Bool { true }
    public static func _coveDefault() -> Self { Self() }

    public static func _coveRecording(_ recorder: _KeyPathRecorder) -> Self? {
        let instance = Self()
        instance.keyPathRecorder = recorder
        for (name, property) in instance.persistedProperties() { property._coveBind(instance, name) }
        recorder.retained.append(instance)
        return instance
    }

    public static func _coveRead(_ value: Value, _ realm: Realm?) throws(CoveError) -> Self {
        guard case .link(let link) = value, let realm, let object = try realm.object(for: link) else { throw mismatch(value) }
        guard let typed = ModelRegistry.make(object) as? Self else { throw mismatch(value) }
        return typed
    }

    public func _coveWrite(_ realm: Realm?) throws(CoveError) -> Value {
        if let dynamicObject {
            guard let realm, dynamicObject.realm === realm else {
                throw CoveError(.invalidArgument, "the \(Self.className) object belongs to another realm")
            }
            return .link(dynamicObject.link)
        }
        if self is EmbeddedObject {
            throw CoveError(.invalidArgument, "an embedded \(Self.className) is created in place through its parent")
        }
        guard let realm else { throw CoveError(.invalidArgument, "an unmanaged \(Self.className) can only be linked from a managed object") }
        try realm.checkedAdd(self)
        guard let dynamicObject else { throw CoveError(.internal, "the \(Self.className) object was not added") }
        return .link(dynamicObject.link)
    }
}

/// Model classes by class name, so that links read back as the right Swift class.
enum ModelRegistry {
    private static let types = Mutex<[String: Object.Type]>([:])

    static func register(_ type: Object.Type) {
        types.withLock { $0[type.className] = type }
    }

    /// The Swift object for a realm object: an instance of its registered class, bound.
    static func make(_ object: DynamicObject) -> Object {
        let type = types.withLock { $0[object.objectSchema.className] } ?? Object.self
        let instance = type.init()
        instance.bind(object)
        return instance
    }
}

extension ObjectSchema {
    /// The schema of a model class, from its @Persisted properties (registering the class so
    /// that links read back as it).
    /// - Throws: `.schema` for a class with two primary keys.
    public init(objectType: Object.Type) throws(CoveError) {
        ModelRegistry.register(objectType)
        let instance = objectType.init()
        var properties: [Property] = []
        var primaryKey: String?
        for (name, persisted) in instance.persistedProperties() {
            let p = persisted._coveProperty(name)
            if p.isPrimaryKey {
                if let primaryKey {
                    throw CoveError(.schema, "class '\(objectType.className)' declares two primary keys: '\(primaryKey)' and '\(name)'")
                }
                primaryKey = name
            }
            properties.append(p)
        }
        self.init(className: objectType.className, properties: properties, primaryKey: primaryKey,
                  isEmbedded: objectType is EmbeddedObject.Type)
    }
}

extension Schema {
    /// The schema of model classes, discovered from their @Persisted properties and validated.
    ///
    ///     let schema = try Schema(objectTypes: [Dog.self, Toy.self])
    public init(objectTypes: [Object.Type]) throws(CoveError) {
        var classes: [ObjectSchema] = []
        for type in objectTypes { classes.append(try ObjectSchema(objectType: type)) }
        try self.init(classes)
    }
}
