// The values that changes carry, the primary keys that name objects, and references to objects.
// Equality and order are total (a NaN equals itself), because the merge rules key sets by value
// and snapshots sort them: every replica must agree on which values are the same.

/// An object's primary key: Cove allows int, string, ObjectId and UUID keys.
public enum SyncPrimaryKey: Hashable, Comparable, Sendable, CustomStringConvertible {
    case int(Int64)
    case string(String)
    case objectId(SyncObjectId)
    case uuid(SyncUUID)

    /// The key as a value.
    public var value: SyncValue {
        switch self {
        case .int(let v): return .int(v)
        case .string(let v): return .string(v)
        case .objectId(let v): return .objectId(v)
        case .uuid(let v): return .uuid(v)
        }
    }

    /// The key a value names, or nil for a value of another type.
    public init?(_ value: SyncValue) {
        switch value {
        case .int(let v): self = .int(v)
        case .string(let v): self = .string(v)
        case .objectId(let v): self = .objectId(v)
        case .uuid(let v): self = .uuid(v)
        default: return nil
        }
    }

    /// Keys are equal when their values are: strings by their bytes, so that two spellings of
    /// one text in Unicode's eyes (`é` and `e` with a combining accent) name two objects, as they
    /// do in the database.
    public static func == (a: SyncPrimaryKey, b: SyncPrimaryKey) -> Bool {
        a.value == b.value
    }

    public func hash(into hasher: inout Hasher) {
        value.hash(into: &hasher)
    }

    public static func < (a: SyncPrimaryKey, b: SyncPrimaryKey) -> Bool {
        a.value < b.value
    }

    public var description: String { value.description }
}

/// One object: its class and primary key.
public struct SyncObjectRef: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The class's name.
    public let className: String
    /// The object's primary key.
    public let key: SyncPrimaryKey

    /// - Throws: `SyncError(.invalidValue)` when the class name is not a valid name.
    public init(className: String, key: SyncPrimaryKey) throws(SyncError) {
        try SyncName.check(className, "class")
        self.className = className
        self.key = key
    }

    /// Orders by class name (UTF-8 bytes), then key.
    public static func < (a: SyncObjectRef, b: SyncObjectRef) -> Bool {
        if a.className != b.className { return a.className.utf8.lexicographicallyPrecedes(b.className.utf8) }
        return a.key < b.key
    }

    public var description: String { "\(className)[\(key)]" }
}

/// A value of a property, of a list or set element, or of a map entry.
///
/// Values are equal when they are of the same type and hold the same thing: the int 1 and the
/// double 1.0 are different values, doubles compare by their bits with every NaN one value, and
/// 0.0 and -0.0 are different. Values order by type first (in the order of the cases), then
/// within a type (doubles by IEEE 754's total order, strings and data by bytes).
public enum SyncValue: Hashable, Comparable, Sendable, CustomStringConvertible {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case data([UInt8])
    case date(SyncDate)
    case objectId(SyncObjectId)
    case uuid(SyncUUID)
    case decimal128(SyncDecimal128)
    case link(SyncObjectRef)

    /// The position of the value's type in the order of types.
    private var rank: Int {
        switch self {
        case .null: return 0
        case .bool: return 1
        case .int: return 2
        case .double: return 3
        case .string: return 4
        case .data: return 5
        case .date: return 6
        case .objectId: return 7
        case .uuid: return 8
        case .decimal128: return 9
        case .link: return 10
        }
    }

    /// The type's name, for messages: `int`, `string`, `link`, ...
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "bool"
        case .int: return "int"
        case .double: return "double"
        case .string: return "string"
        case .data: return "data"
        case .date: return "date"
        case .objectId: return "objectId"
        case .uuid: return "uuid"
        case .decimal128: return "decimal128"
        case .link: return "link"
        }
    }

    /// A double's bits with every NaN made one, so that equality is an equivalence.
    private static func canonicalBits(_ d: Double) -> UInt64 {
        d.isNaN ? Double.nan.bitPattern : d.bitPattern
    }

    public static func == (a: SyncValue, b: SyncValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.int(let x), .int(let y)): return x == y
        case (.double(let x), .double(let y)): return canonicalBits(x) == canonicalBits(y)
        case (.string(let x), .string(let y)): return x.utf8.elementsEqual(y.utf8)
        case (.data(let x), .data(let y)): return x == y
        case (.date(let x), .date(let y)): return x == y
        case (.objectId(let x), .objectId(let y)): return x == y
        case (.uuid(let x), .uuid(let y)): return x == y
        case (.decimal128(let x), .decimal128(let y)): return x == y
        case (.link(let x), .link(let y)): return x == y
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(rank)
        switch self {
        case .null: break
        case .bool(let v): hasher.combine(v)
        case .int(let v): hasher.combine(v)
        case .double(let v): hasher.combine(Self.canonicalBits(v))
        // Strings hash by bytes, as they compare: Swift's String equality would make canonically
        // equivalent texts one value, which the byte order below would not.
        case .string(let v):
            hasher.combine(v.utf8.count)
            for b in v.utf8 { hasher.combine(b) }
        case .data(let v): hasher.combine(v)
        case .date(let v): hasher.combine(v)
        case .objectId(let v): hasher.combine(v)
        case .uuid(let v): hasher.combine(v)
        case .decimal128(let v): hasher.combine(v)
        case .link(let v): hasher.combine(v)
        }
    }

    public static func < (a: SyncValue, b: SyncValue) -> Bool {
        switch (a, b) {
        case (.bool(let x), .bool(let y)): return !x && y
        case (.int(let x), .int(let y)): return x < y
        case (.double(let x), .double(let y)):
            let (cx, cy) = (x.isNaN ? Double.nan : x, y.isNaN ? Double.nan : y)
            return cx.isTotallyOrdered(belowOrEqualTo: cy) && canonicalBits(cx) != canonicalBits(cy)
        case (.string(let x), .string(let y)): return x.utf8.lexicographicallyPrecedes(y.utf8)
        case (.data(let x), .data(let y)): return x.lexicographicallyPrecedes(y)
        case (.date(let x), .date(let y)): return x < y
        case (.objectId(let x), .objectId(let y)): return x < y
        case (.uuid(let x), .uuid(let y)): return x < y
        case (.decimal128(let x), .decimal128(let y)): return x < y
        case (.link(let x), .link(let y)): return x < y
        default: return a.rank < b.rank
        }
    }

    /// The value written as the query language writes literals: `null`, `42`, `'text'`,
    /// `T1:0`, `oid(…)`, ... (data as `bin(<n> bytes)`, a link as `Class[key]`).
    public var description: String {
        switch self {
        case .null: return "null"
        case .bool(let v): return v ? "true" : "false"
        case .int(let v): return String(v)
        case .double(let v): return String(v)
        case .string(let v): return "'" + v.replacingQuotesAndBackslashes() + "'"
        case .data(let v): return "bin(\(v.count) bytes)"
        case .date(let v): return v.description
        case .objectId(let v): return v.description
        case .uuid(let v): return v.description
        case .decimal128(let v): return "decimal128(\(v.text))"
        case .link(let v): return v.description
        }
    }
}

extension String {
    /// The text with `'` and `\` escaped by a backslash, for a quoted literal in a message.
    fileprivate func replacingQuotesAndBackslashes() -> String {
        var out = ""
        for c in unicodeScalars {
            if c == "'" || c == "\\" { out.unicodeScalars.append("\\") }
            out.unicodeScalars.append(c)
        }
        return out
    }
}
