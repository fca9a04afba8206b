// The configuration's `schema`: the classes in Cove's schema notation (docs/schema.md), checked
// when the server starts, and what the server makes of them: the schema subscriptions are
// checked against, and a typed table per class whose columns show the objects' states.
import CoveSyncCore
import Foundation

/// Any JSON value, for reading the schema out of the configuration file.
public indirect enum JSONDocument: Codable, Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONDocument])
    case object([String: JSONDocument])

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null } else if let b = try? c.decode(Bool.self) { self = .bool(b) } else if let d = try? c.decode(Double.self) {
            self = .number(d)
        } else if let s = try? c.decode(String.self) { self = .string(s) } else if let a = try? c.decode([JSONDocument].self) {
            self = .array(a)
        } else { self = .object(try c.decode([String: JSONDocument].self)) }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .bool(let b): try c.encode(b)
        case .number(let d): try c.encode(d)
        case .string(let s): try c.encode(s)
        case .array(let a): try c.encode(a)
        case .object(let o): try c.encode(o)
        }
    }
}

/// How a typed column keeps a property's values, and how a value of the query language is
/// bound to be compared with it.
enum ColumnType: String, Sendable, Equatable {
    case boolean, bigint, double = "double precision", text, bytea, numeric, uuid

    /// The type the column is made with (as information_schema names it, for `double`).
    var sql: String { rawValue }

    /// The column's type for a property, nil when subscriptions cannot query it (collections,
    /// mixed, backlinks).
    init?(_ type: SyncPropertyType) {
        guard type.collection == nil else { return nil }
        switch type.base {
        case .bool: self = .boolean
        case .int: self = .bigint
        case .float, .double: self = .double
        case .string, .link: self = .text
        case .data, .objectId: self = .bytea
        case .date, .decimal128: self = .numeric
        case .uuid: self = .uuid
        case .mixed, .linkingObjects: return nil
        }
    }

    /// The SQL that reads the column's value out of its text (`x`, a text expression) as the
    /// typed table holds it.
    func fromText(_ x: String) -> String {
        switch self {
        case .text: return x
        case .bytea: return "decode(\(x), 'hex')"
        default: return "(\(x))::\(sql)"
        }
    }
}

/// One class of the schema as the server uses it.
public struct ServerClass: Sendable, Equatable {
    public let name: String
    public let primaryKey: String
    /// Every property's type, the primary key's included.
    public let properties: [String: SyncPropertyType]
    /// The typed table's columns: the properties subscriptions can query, sorted by name.
    let columns: [(property: String, type: SyncPropertyType, column: ColumnType)]

    public static func == (a: ServerClass, b: ServerClass) -> Bool {
        a.name == b.name && a.primaryKey == b.primaryKey && a.properties == b.properties
    }
}

/// The classes the server keeps typed tables of and answers subscriptions on.
public struct ServerSchema: Sendable, Equatable {
    public let classes: [String: ServerClass]
    /// What subscription queries are checked against.
    public let subscriptions: SubscriptionSchema
    /// The notation it was read from.
    public let document: JSONDocument

    private static let classMembers = ["properties", "primaryKey", "embedded", "indexed", "fulltext"]
    private static let propertyMembers = ["type", "objectType", "optional", "indexed", "fulltext", "property"]

    /// Reads and checks the schema notation.
    /// - Throws: `ConfigError` naming the class and property that is wrong.
    public init(_ document: JSONDocument) throws(ConfigError) {
        guard case .object(let top) = document else { throw ConfigError("schema: expected an object of classes by name") }
        var types: [String: [String: SyncPropertyType]] = [:]
        var keys: [String: String] = [:]
        for (className, body) in top.sorted(by: { $0.key < $1.key }) {
            guard SyncName.isValid(className), (try? SyncPropertyType(notation: className)).map({
                if case .link = $0.base { return true } else { return false }
            }) == true else {
                throw ConfigError("schema: '\(className.prefix(80))' is not a class name: expected an ASCII letter or '_', then letters, digits or '_', not a type's name")
            }
            guard case .object(let members) = body else { throw ConfigError("schema: class '\(className)': expected an object") }
            for name in members.keys.sorted() where !Self.classMembers.contains(name) {
                throw ConfigError("schema: class '\(className)' has unknown member \"\(name.prefix(80))\" (expected \(Self.classMembers.map { "\"\($0)\"" }.joined(separator: ", ")))")
            }
            if case .bool(true)? = members["embedded"] {
                throw ConfigError("schema: class '\(className)' is embedded: embedded objects do not sync yet")
            }
            guard case .object(let properties)? = members["properties"] else {
                throw ConfigError("schema: class '\(className)' needs \"properties\", an object of property types by name")
            }
            var classTypes: [String: SyncPropertyType] = [:]
            for (property, spec) in properties {
                guard SyncName.isValid(property) else {
                    throw ConfigError("schema: class '\(className)': '\(property.prefix(80))' is not a property name")
                }
                classTypes[property] = try Self.type(spec, "class '\(className)', property '\(property)'")
            }
            guard case .string(let key)? = members["primaryKey"] else {
                throw ConfigError("schema: class '\(className)' has no primaryKey: a synced object is named by its primary key")
            }
            guard let keyType = classTypes[key] else {
                throw ConfigError("schema: class '\(className)': the primaryKey '\(key.prefix(80))' is not one of its properties")
            }
            switch (keyType.base, keyType.collection) {
            case (.int, nil), (.string, nil), (.objectId, nil), (.uuid, nil): break
            default:
                throw ConfigError("schema: class '\(className)': the primary key '\(key)' is \(keyType); it must be int, string, objectId or uuid")
            }
            types[className] = classTypes
            keys[className] = key
        }
        for (className, properties) in types {
            for (property, type) in properties {
                switch type.base {
                case .link(let target) where types[target] == nil:
                    throw ConfigError("schema: class '\(className)', property '\(property)' links to '\(target)', which the schema lacks")
                case .linkingObjects(let target, _) where types[target] == nil:
                    throw ConfigError("schema: class '\(className)', property '\(property)' has backlinks from '\(target)', which the schema lacks")
                default: break
                }
            }
        }
        var classes: [String: ServerClass] = [:]
        let naming = SQLNaming()
        for (className, properties) in types {
            var columns: [(String, SyncPropertyType, ColumnType)] = []
            for (property, type) in properties.sorted(by: { $0.key < $1.key }) {
                guard let column = ColumnType(type) else { continue }
                do {
                    _ = try naming.column(property)
                    _ = try naming.table(className)
                } catch {
                    throw ConfigError("schema: class '\(className)': \(error.message)")
                }
                columns.append((property, type, column))
            }
            classes[className] = ServerClass(name: className, primaryKey: keys[className] ?? "", properties: properties, columns: columns)
        }
        self.classes = classes
        subscriptions = SubscriptionSchema(types)
        self.document = document
    }

    /// A property's type, written as a type string or in the object form.
    private static func type(_ spec: JSONDocument, _ place: String) throws(ConfigError) -> SyncPropertyType {
        switch spec {
        case .string(let text):
            do { return try SyncPropertyType(notation: text) } catch { throw ConfigError("schema: \(place): \(error.message)") }
        case .object(let m):
            for name in m.keys.sorted() where !propertyMembers.contains(name) {
                throw ConfigError("schema: \(place) has unknown member \"\(name.prefix(80))\"")
            }
            guard case .string(let kind)? = m["type"] else { throw ConfigError("schema: \(place): \"type\" must be a string") }
            var optional = false
            if case .bool(let b)? = m["optional"] { optional = b }
            let element: String
            if ["list", "set", "dictionary", "object", "linkingObjects"].contains(kind) {
                guard case .string(let inner)? = m["objectType"] else { throw ConfigError("schema: \(place): a \(kind) needs \"objectType\"") }
                element = inner
            } else {
                element = kind
            }
            let text: String
            switch kind {
            case "list": text = element + "[]"
            case "set": text = element + "<>"
            case "dictionary": text = element + "{}"
            case "linkingObjects":
                guard case .string(let p)? = m["property"] else { throw ConfigError("schema: \(place): linkingObjects needs \"property\"") }
                text = "@links(\(element).\(p))"
            default: text = element + (optional && !element.hasSuffix("?") ? "?" : "")
            }
            return try type(.string(text), place)
        default:
            throw ConfigError("schema: \(place): expected a type such as \"int\" or an object with \"type\"")
        }
    }
}

/// Values as the text the typed tables' columns read (`ColumnType.fromText`), and as SQL
/// parameters bound to compare with them: nil when the value does not fit the column.
enum SQLValues {
    /// The text of `value` for a column of `type`, nil when it does not fit (its type is not
    /// the property's, or the database could not hold it).
    static func text(_ value: SyncValue, for type: SyncPropertyType) -> String? {
        switch (type.base, value) {
        case (.bool, .bool(let b)): return b ? "true" : "false"
        case (.int, .int(let i)): return String(i)
        case (.float, .double(let d)), (.double, .double(let d)): return doubleText(d)
        case (.string, .string(let s)): return s.utf8.contains(0) ? nil : s
        case (.data, .data(let bytes)): return hex(bytes)
        case (.objectId, .objectId(let oid)): return oid.hex
        case (.date, .date(let date)): return dateText(date)
        case (.decimal128, .decimal128(let d)): return decimalText(d)
        case (.uuid, .uuid(let u)): return u.text
        case (.link, .link(let ref)): return ref.description
        default: return nil
        }
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func doubleText(_ d: Double) -> String {
        if d.isNaN { return "NaN" }
        if d.isInfinite { return d < 0 ? "-Infinity" : "Infinity" }
        return "\(d)"
    }

    /// Seconds with nine decimals: exact, and ordered as the dates are.
    static func dateText(_ date: SyncDate) -> String {
        let negative = date.seconds < 0 || date.nanoseconds < 0
        let nanos = String(date.nanoseconds.magnitude)
        return (negative ? "-" : "") + "\(date.seconds.magnitude)." + String(repeating: "0", count: 9 - nanos.count) + nanos
    }

    /// A finite decimal whose exponent PostgreSQL's numeric takes; NaN and infinities do not fit.
    static func decimalText(_ d: SyncDecimal128) -> String? {
        let text = d.text
        guard text.first.map({ $0.isNumber || $0 == "+" || $0 == "-" || $0 == "." }) == true, !text.contains("Inf") else { return nil }
        if let e = text.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            guard let exponent = Int(text[text.index(after: e)...].trimmingPrefix("+")), abs(exponent) <= 300 else { return nil }
        }
        return text
    }

    /// A parameter for a query's value, typed as the column it is compared with would be.
    static func parameter(_ value: SyncValue) -> TextParameter? {
        switch value {
        case .null, .link: return nil
        case .bool(let b): return TextParameter(type: .bool, text: b ? "t" : "f")
        case .int(let i): return TextParameter(type: .int8, text: String(i))
        case .double(let d): return TextParameter(type: .float8, text: doubleText(d))
        case .string(let s): return s.utf8.contains(0) ? nil : TextParameter(type: .text, text: s)
        case .data(let bytes): return TextParameter(type: .bytea, text: "\\x" + hex(bytes))
        case .objectId(let oid): return TextParameter(type: .bytea, text: "\\x" + oid.hex)
        case .date(let date): return TextParameter(type: .numeric, text: dateText(date))
        case .decimal128(let d): return decimalText(d).map { TextParameter(type: .numeric, text: $0) }
        case .uuid(let u): return TextParameter(type: .uuid, text: u.text)
        }
    }
}

import PostgresNIO

/// A parameter sent as text with its type, for PostgreSQL to read as that type.
struct TextParameter: PostgresDynamicTypeEncodable {
    let type: PostgresDataType
    let text: String

    var psqlType: PostgresDataType { type }
    var psqlFormat: PostgresFormat { .text }

    func encode<JSONEncoder: PostgresJSONEncoder>(into byteBuffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        byteBuffer.writeString(text)
    }
}

extension PostgresBindings {
    /// Binds a query's values: each typed as `SQLValues.parameter` says, or null.
    mutating func append(values: [SyncValue]) {
        for v in values {
            if let p = SQLValues.parameter(v) { append(p) } else { appendNull() }
        }
    }
}
