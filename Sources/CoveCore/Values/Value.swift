// Value: one stored value of any property type, the currency between the object layer, the query
// layer and the bindings. Its equality is the database's (strings by UTF-8 bytes, -0 == 0, NaN ==
// NaN, 1.5 == 1.50), the same equality as its index key.
import FoundationEssentials

/// A link to an object: its class's key and its object key within that class's table.
public struct ObjectLink: Hashable, Sendable {
    /// The key of the target's class (see `ObjectSchema.classKey`).
    public var classKey: UInt32
    /// The target's object key within its table.
    public var objectKey: Int64

    /// A link to object `objectKey` of the class with key `classKey`.
    public init(classKey: UInt32, objectKey: Int64) {
        self.classKey = classKey
        self.objectKey = objectKey
    }
}

/// A value of any type Cove stores (the C API's `cove_value_t`).
///
/// Equality is the database's, consistent with `indexKey()`: strings compare by their UTF-8 bytes
/// (no Unicode normalization: "é" and "e\u{301}" differ), floats and doubles treat -0 and 0 as
/// equal and NaN as equal to NaN, decimals compare numerically. Values of different cases are
/// never equal (`.int(1) != .double(1)`).
public enum Value: Sendable {
    /// No value.
    case null
    /// A bool.
    case bool(Bool)
    /// A 64-bit integer.
    case int(Int64)
    /// A 32-bit float.
    case float(Float)
    /// A 64-bit double.
    case double(Double)
    /// A string.
    case string(String)
    /// Binary data.
    case data([UInt8])
    /// A date.
    case timestamp(Timestamp)
    /// A decimal128.
    case decimal128(Decimal128)
    /// An ObjectId.
    case objectId(ObjectId)
    /// A UUID.
    case uuid(UUID)
    /// A link to an object.
    case link(ObjectLink)
    /// A list of values, held by a mixed value (Realm's `AnyRealmValue.list`): its elements are
    /// mixed values themselves, nested collections included, to any depth.
    case list([Value])
    /// A dictionary of values under string keys, held by a mixed value (Realm's
    /// `AnyRealmValue.dictionary`); its values are mixed values, nested collections included.
    case dictionary([String: Value])

    /// The type tag shared by the index key encoding and the mixed encoding. Its order is the
    /// order of types within an index over mixed values: null first.
    public enum Tag: UInt8, Sendable, CaseIterable {
        case null = 0, bool, int, float, double, decimal128, timestamp, string, data, objectId, uuid, link
        /// Nested collections, after every other type.
        case list, dictionary
    }

    /// This value's type tag.
    public var tag: Tag {
        switch self {
        case .null: .null
        case .bool: .bool
        case .int: .int
        case .float: .float
        case .double: .double
        case .string: .string
        case .data: .data
        case .timestamp: .timestamp
        case .decimal128: .decimal128
        case .objectId: .objectId
        case .uuid: .uuid
        case .link: .link
        case .list: .list
        case .dictionary: .dictionary
        }
    }

    /// The name of this value's type in messages, as the schema notation spells types: "null",
    /// "bool", "int", "float", "double", "string", "data", "date", "decimal128", "objectId",
    /// "uuid", "link", "list", "dictionary".
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "bool"
        case .int: "int"
        case .float: "float"
        case .double: "double"
        case .string: "string"
        case .data: "data"
        case .timestamp: "date"
        case .decimal128: "decimal128"
        case .objectId: "objectId"
        case .uuid: "uuid"
        case .link: "link"
        case .list: "list"
        case .dictionary: "dictionary"
        }
    }

    /// Whether the value is a nested collection (a list or a dictionary).
    public var isCollection: Bool {
        switch self {
        case .list, .dictionary: return true
        default: return false
        }
    }

    /// True for `.null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The type and the value for messages, e.g. `string "x"`, `int 5`, `null`.
    public var typedDescription: String {
        if case .null = self { return "null" }
        return typeName + " " + description
    }
}

extension Value: CustomStringConvertible {
    /// The value as messages show it: strings quoted and escaped as JSON (`"x"`), data as hex
    /// (`<0a1b>`, cut after 32 bytes), dates in ISO 8601, uuids in lowercase, links as
    /// `link(class 2, object 17)`.
    public var description: String {
        switch self {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return String(i)
        case .float(let f): return f.description
        case .double(let d): return d.description
        case .string(let s): return JSONValue.quoted(s)
        case .data(let bytes):
            let digits = Array("0123456789abcdef")
            var out = "<"
            for b in bytes.prefix(32) {
                out.append(digits[Int(b >> 4)])
                out.append(digits[Int(b & 0xF)])
            }
            return out + (bytes.count > 32 ? "... (\(bytes.count) bytes)>" : ">")
        case .timestamp(let t): return t.description
        case .decimal128(let d): return d.description
        case .objectId(let o): return o.description
        case .uuid(let u): return u.uuidString.lowercased()
        case .link(let l): return "link(class \(l.classKey), object \(l.objectKey))"
        case .list(let elements): return "[" + elements.map(\.description).joined(separator: ", ") + "]"
        case .dictionary(let entries):
            return "{" + Value.sortedEntries(entries).map { JSONValue.quoted($0.key) + ": " + $0.value.description }
                .joined(separator: ", ") + "}"
        }
    }
}

extension Value: Hashable {
    /// The database's equality (see the type's documentation).
    public static func == (a: Value, b: Value) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.int(let x), .int(let y)): return x == y
        case (.float(let x), .float(let y)): return x == y || (x.isNaN && y.isNaN)
        case (.double(let x), .double(let y)): return x == y || (x.isNaN && y.isNaN)
        case (.string(let x), .string(let y)): return x.utf8.elementsEqual(y.utf8)
        case (.data(let x), .data(let y)): return x == y
        case (.timestamp(let x), .timestamp(let y)): return x == y
        case (.decimal128(let x), .decimal128(let y)): return x == y
        case (.objectId(let x), .objectId(let y)): return x == y
        case (.uuid(let x), .uuid(let y)): return x == y
        case (.link(let x), .link(let y)): return x == y
        case (.list(let x), .list(let y)): return x == y
        case (.dictionary(let x), .dictionary(let y)): return x == y
        default: return false
        }
    }

    /// Hashes consistently with `==`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(tag.rawValue)
        switch self {
        case .null: break
        case .bool(let b): hasher.combine(b)
        case .int(let i): hasher.combine(i)
        case .float(let f): hasher.combine(f.isNaN ? Float.nan.bitPattern : (f == 0 ? 0 : f.bitPattern))
        case .double(let d): hasher.combine(d.isNaN ? Double.nan.bitPattern : (d == 0 ? 0 : d.bitPattern))
        case .string(let s):
            hasher.combine(s.utf8.count)
            for b in s.utf8 { hasher.combine(b) }
        case .data(let d): hasher.combine(d)
        case .timestamp(let t): hasher.combine(t)
        case .decimal128(let d): hasher.combine(d)
        case .objectId(let o): hasher.combine(o)
        case .uuid(let u): hasher.combine(u)
        case .link(let l): hasher.combine(l)
        case .list(let elements): hasher.combine(elements)
        case .dictionary(let entries): hasher.combine(entries)
        }
    }
}

extension Value {
    /// The entries of a dictionary in the order Cove keeps them: by their keys' UTF-8 bytes.
    package static func sortedEntries(_ entries: [String: Value]) -> [(key: String, value: Value)] {
        entries.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
    }
}

extension UUID {
    /// The UUID of 16 bytes in RFC 4122 order (`p` must hold at least 16 bytes).
    init(rfc4122Bytes p: UnsafeRawBufferPointer) {
        self.init(uuid: (p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7],
                         p[8], p[9], p[10], p[11], p[12], p[13], p[14], p[15]))
    }

    /// The 16 bytes in RFC 4122 order.
    var rfc4122Bytes: [UInt8] {
        withUnsafeBytes(of: uuid) { Array($0) }
    }
}
