// A small, strict JSON value: the schema notation, `to_json` of results, `cove dump` and
// `cove import` all go through it. Numbers stay exact (integers as Int64 when they fit) and
// object members keep their document order, duplicates included, so callers can reject them.

/// One member of a JSON object: a key and its value, kept in document order.
public struct JSONMember: Equatable, Sendable {
    /// The member's key.
    public var key: String
    /// The member's value.
    public var value: JSONValue

    /// A member with `key` and `value`.
    public init(_ key: String, _ value: JSONValue) {
        self.key = key
        self.value = value
    }
}

/// A JSON value. Integers that fit in `Int64` are `.int`; every other number is `.double`.
/// Objects are arrays of members in document order and may hold duplicate keys (the parser keeps
/// them so that the schema parser can name the duplicate).
public enum JSONValue: Equatable, Sendable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number written without fraction or exponent that fits in `Int64`.
    case int(Int64)
    /// Any other number (a fraction, an exponent, `-0`, or an integer beyond `Int64`).
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object: members in document order.
    case object([JSONMember])

    /// The value of the first member named `key` when this is an object, else nil.
    /// - Complexity: O(n) in the number of members.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first(where: { $0.key == key })?.value
    }

    /// The name of this value's kind for messages: "null", "bool", "number", "string", "array",
    /// "object".
    public var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "bool"
        case .int, .double: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    /// Parses JSON text. Throws `CoveError(.invalidArgument)` whose message gives the line and
    /// column (1-based, columns counted in Unicode scalars) and what was expected there.
    public init(parsing text: String) throws(CoveError) {
        var text = text
        let result = text.withUTF8 { buffer in
            var parser = JSONParser(UnsafeRawBufferPointer(buffer))
            return Result { () throws(CoveError) -> JSONValue in try parser.parseDocument() }
        }
        self = try result.get()
    }

    /// Parses JSON from UTF-8 bytes, refusing invalid UTF-8 inside strings and any non-ASCII byte
    /// outside them.
    public init(parsing bytes: UnsafeRawBufferPointer) throws(CoveError) {
        var parser = JSONParser(bytes)
        self = try parser.parseDocument()
    }

    /// Parses JSON from UTF-8 bytes.
    public init(parsing bytes: [UInt8]) throws(CoveError) {
        let result = bytes.withUnsafeBytes { buffer in
            var parser = JSONParser(buffer)
            return Result { () throws(CoveError) -> JSONValue in try parser.parseDocument() }
        }
        self = try result.get()
    }
}

extension JSONValue: CustomStringConvertible {
    /// The compact JSON text of this value.
    public var description: String { serialized() }
}
