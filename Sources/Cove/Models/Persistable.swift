// The Swift types a model's @Persisted property can have, and how each maps onto the schema and
// onto `Value`: Int and the other integers, Bool, Float, Double, String, [UInt8] and Data, Date
// and Timestamp, Decimal128, ObjectId, UUID, Value (mixed), optionals of them, links to Object
// subclasses, and List, MutableSet, Map and LinkingObjects of them.
import CoveCore
import FoundationEssentials

/// A property type of a model: what the schema says of it, and how a managed object reads and
/// writes it. Conformances are Cove's own; the names start with an underscore because they are
/// plumbing, not API.
public protocol _PersistableProperty {
    /// One value, or a list, set or map of them.
    static var _coveCollection: CollectionKind { get }
    /// The type of the value (of the elements, for a collection).
    static var _coveType: PropertyType { get }
    /// Whether the value (each element) may be null.
    static var _coveOptional: Bool { get }
    /// The value of a property declared without one (`@Persisted var name: String`).
    static func _coveDefault() -> Self
    /// The value of property `name` of a managed object.
    static func _coveGet(_ object: DynamicObject, _ name: String) throws(CoveError) -> Self
    /// Writes `value` into property `name` of a managed object (inside a write).
    static func _coveSet(_ value: Self, _ object: DynamicObject, _ name: String) throws(CoveError)
    /// What a property of a recording object reads (Projection.swift): a recording object for a
    /// link, a recording collection; nil for the property's own value.
    static func _coveRecording(_ recorder: _KeyPathRecorder) -> Self?
}

extension _PersistableProperty {
    public static func _coveRecording(_ recorder: _KeyPathRecorder) -> Self? { nil }
}

/// A type that is one value of a property or an element of a collection.
public protocol _PersistableValue: _PersistableProperty {
    /// The value read from the realm (`realm` resolves links).
    static func _coveRead(_ value: Value, _ realm: Realm?) throws(CoveError) -> Self
    /// The value to store in `realm` (an unmanaged linked object is added first).
    func _coveWrite(_ realm: Realm?) throws(CoveError) -> Value
}

extension _PersistableValue {
    public static var _coveCollection: CollectionKind { .none }
    public static var _coveOptional: Bool { false }

    public static func _coveGet(_ object: DynamicObject, _ name: String) throws(CoveError) -> Self {
        try _coveRead(try object.value(forKey: name), object.realm)
    }

    public static func _coveSet(_ value: Self, _ object: DynamicObject, _ name: String) throws(CoveError) {
        if let embedded = value as? EmbeddedObject {
            try embedded._coveAdopt(try object.createEmbeddedObject(forProperty: name))
            return
        }
        try object.setValue(try value._coveWrite(object.realm), forKey: name)
    }

    static func mismatch(_ value: Value) -> CoveError {
        CoveError(.wrongType, "a \(Self.self) cannot hold \(value.typedDescription)")
    }
}

extension Int: _PersistableValue {
    public static var _coveType: PropertyType { .int }
    public static func _coveDefault() -> Int { 0 }
    public static func _coveRead(_ value: Value, _ realm: Realm?) throws(CoveError) -> Int {
        guard case .int(let i) = value else { throw mismatch(value) }
        return Int(i)
    }
    public func _coveWrite(_ realm: Realm?) -> Value { .int(Int64(self)) }
}

extension Int64: _PersistableValue {
    public static var _coveType: PropertyType { .int }
    public static func _coveDefault() -> Int64 { 0 }
    public static func _coveRead(_ value: Value, _ realm: Realm?) throws(CoveError) -> Int64 {
        guard case .int(let i) = value else { throw mismatch(value) }
        return i
    }
    public func _coveWrite(_ realm: Realm?) -> Value { .int(self) }
}

extension Int32: _PersistableValue {
    public static var _coveType: PropertyType { .int }
    public static func _coveDefault() -> Int32 { 0 }
    public static func _coveRead(_ value: Value, _ realm: Realm?) throws(CoveError) -> Int32 {
        guard case .int(let i) = value, let v = Int32(exactly: i) else { throw mismatch(value) }
        return v
    }
    public func _coveWrite(_ realm: Realm?) -> Value { .int(Int64(self)) }
}

extension Bool: _PersistableValue {
    public static var _coveType: PropertyType { .bool }
    public static func _coveDefault() -> Bool { false }
    public static func _coveRead(_ value: Value, _ realm: Realm?) throws(CoveError) -> Bool {
        guard case .bool(let b) = value else { throw mismatch(value) }
        return b
    }
    public func _coveWrite(_ realm: Realm?) -> Value { .bool(self) }
}

extension Double: _PersistableValue {
    public static var _coveType: PropertyType { .double }
    public static func _coveDefault() -> Double { 0 }
    public static func _coveRead(_ value: Value, _ realm: Realm?) throws(CoveError) -> Double {
        switch value {
        case .double(let d): return d
        case .float(let f): return Double(f)
        case .int(let i): return Double(i)
        default: throw mismatch(value)
        }
    }
    public func _coveWrite(_ realm: Realm?) -> Value { .double(self) }
}

extension Float: _PersistableValue {
    public static var _coveType: PropertyType { .float }
    public static func _coveDefault() -> Float { 0 }
    public static func _coveRead(_ value: Value, _ realm: Realm?) throws(CoveError) -> Float {
        switch value {
        case .float(let f): return f
        case .double(let d): return Float(d)
        case .int(let i): return Float(i)
        default: throw mismatch(value)
        }
    }
    public func _coveWrite(_ realm: Realm?) -> Value { .float(self) }
}

extension String: _PersistableValue {
    public static var _coveType: PropertyType { .string }
    public static func _coveDefault() -> String { "" }
    public static func _coveRead(_ value: Value, _ realm: Realm?) throws(CoveError) -> String {
        guard case .string(let s) = value else { throw mismatch(value) }
        return s
    }
    public func _coveWrite(_ realm: Realm?) -> Value { .string(self) }
}

extension Data: _PersistableValue {
    public static var _coveType: PropertyType { .data }
    public static func _coveDefault() -> Data { Data() }
    public static func _coveRead(_ value: Value, _ realm: Realm?) throws(CoveError) -> Data {
        guard case .data(let d) = value else { throw mismatch(value) }
        return Data(d)
    }
    public func _coveWrite(_ realm: Realm?) -> Value { .data([UInt8](self)) }
}

extension Date: _PersistableValue {
    public static var _coveType: PropertyType { .date }
    public static func _coveDefault() -> Date { Date(timeIntervalSince1970: 0) }
    public static func _coveRead(_ value: Value, _ realm: Realm?) throws(CoveError) -> Date {
        guard case .timestamp(let t) = value else { throw mismatch(value) }
        return t.date
    }
    public func _coveWrite(_ realm: Realm?) -> Value { .timestamp(Timestamp(self)) }
}

extension Timestamp: _PersistableValue {
    public static var _coveType: PropertyType { .date }
    public static func _coveDefault() -> Timestamp { Timestamp(seconds: 0) }
    public static func _coveRead(_ value: Value, _ realm: Realm?) throws(CoveError) -> Timestamp {
        guard case .timestamp(let t) = value else { throw mismatch(value) }
        return t
    }
    public func _coveWrite(_ realm: Realm?) -> Value { .timestamp(self) }
}

extension Decimal128: _PersistableValue {
    public static var _coveType: PropertyType { .decimal128 }
    public static func _coveDefault() -> Decimal128 { .zero }
    public static func _coveRead(_ value: Value, _ realm: Realm?) throws(CoveError) -> Decimal128 {
        switch value {
        case .decimal128(let d): return d
        case .int(let i): return Decimal128(i)
        default: throw mismatch(value)
        }
    }
    public func _coveWrite(_ realm: Realm?) -> Value { .decimal128(self) }
}

extension ObjectId: _PersistableValue {
    public static var _coveType: PropertyType { .objectId }
    public static func _coveDefault() -> ObjectId { .generate() }
    public static func _coveRead(_ value: Value, _ realm: Realm?) throws(CoveError) -> ObjectId {
        guard case .objectId(let o) = value else { throw mismatch(value) }
        return o
    }
    public func _coveWrite(_ realm: Realm?) -> Value { .objectId(self) }
}

extension UUID: _PersistableValue {
    public static var _coveType: PropertyType { .uuid }
    public static func _coveDefault() -> UUID { UUID() }
    public static func _coveRead(_ value: Value, _ realm: Realm?) throws(CoveError) -> UUID {
        guard case .uuid(let u) = value else { throw mismatch(value) }
        return u
    }
    public func _coveWrite(_ realm: Realm?) -> Value { .uuid(self) }
}

/// realm-swift's name for the mixed type: a `Value`, whose `.list` and `.dictionary` cases
/// hold nested collections of mixed values.
public typealias AnyRealmValue = Value

/// `Value` is the mixed type (realm-swift's AnyRealmValue).
extension Value: _PersistableValue {
    public static var _coveType: PropertyType { .mixed }
    public static var _coveOptional: Bool { true }
    public static func _coveDefault() -> Value { .null }
    public static func _coveRead(_ value: Value, _ realm: Realm?) -> Value { value }
    public func _coveWrite(_ realm: Realm?) -> Value { self }
}

extension Optional: _PersistableProperty where Wrapped: _PersistableValue {}

extension Optional: _PersistableValue where Wrapped: _PersistableValue {
    public static var _coveType: PropertyType { Wrapped._coveType }
    public static var _coveOptional: Bool { true }
    public static func _coveDefault() -> Wrapped? { nil }
    public static func _coveRead(_ value: Value, _ realm: Realm?) throws(CoveError) -> Wrapped? {
        if case .null = value { return nil }
        return try Wrapped._coveRead(value, realm)
    }
    public func _coveWrite(_ realm: Realm?) throws(CoveError) -> Value {
        guard let self else { return .null }
        return try self._coveWrite(realm)
    }
    public static func _coveRecording(_ recorder: _KeyPathRecorder) -> Wrapped?? {
        Wrapped._coveRecording(recorder).map { .some($0) }
    }
    public static func _coveSet(_ value: Wrapped?, _ object: DynamicObject, _ name: String) throws(CoveError) {
        if let embedded = value as? EmbeddedObject {
            try embedded._coveAdopt(try object.createEmbeddedObject(forProperty: name))
            return
        }
        try object.setValue(try value._coveWrite(object.realm), forKey: name)
    }
}
