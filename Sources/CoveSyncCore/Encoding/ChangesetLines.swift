// Changesets as JSON lines: one changeset a line, what uploads and downloads carry. The writer is
// canonical (members in a fixed order, shortest round-trip doubles), so equal changesets give equal
// text. The reader is strict: every member is required or refused by name, every value is
// type-checked, and every error names the line and the field.

/// Bounds on what the reader accepts, so that hostile input costs bounded memory and time.
public struct ChangesetLimits: Hashable, Sendable {
    /// The longest line, in bytes.
    public var maxLineBytes: Int
    /// The longest string (after unescaping), in bytes: strings, member names, base64 data text.
    public var maxStringBytes: Int
    /// The most operations in one changeset.
    public var maxOperations: Int
    /// The deepest nesting of JSON objects and arrays. The format itself needs 7 (a link's
    /// ObjectId key inside a create's values).
    public var maxDepth: Int

    public init(maxLineBytes: Int = 64 << 20, maxStringBytes: Int = 16 << 20, maxOperations: Int = 100_000, maxDepth: Int = 8) {
        self.maxLineBytes = maxLineBytes
        self.maxStringBytes = maxStringBytes
        self.maxOperations = maxOperations
        self.maxDepth = maxDepth
    }
}

/// Encodes changesets as JSON lines and decodes them. The format is described field by field in
/// docs/SYNC.md.
public enum ChangesetLines {
    // MARK: Encoding

    /// One changeset as one line of JSON, without the line feed.
    public static func encode(_ changeset: Changeset) -> String {
        var json = JSONWriter()
        json.openObject()
        json.key("client")
        json.raw(String(changeset.clientId))
        json.key("version")
        json.raw(String(changeset.clientVersion))
        json.key("clock")
        json.string(changeset.clock.text)
        json.key("ops")
        json.openArray()
        for op in changeset.operations {
            write(op, to: &json)
        }
        json.closeArray()
        json.closeObject()
        return String(decoding: json.bytes, as: UTF8.self)
    }

    /// Changesets as JSON lines, each ended by a line feed.
    public static func encode(_ changesets: [Changeset]) -> String {
        changesets.map { encode($0) + "\n" }.joined()
    }

    private static func write(_ op: SyncOperation, to json: inout JSONWriter) {
        json.openObject()
        json.key("op")
        json.string(op.change.kindName)
        json.key("clock")
        json.string(op.clock.text)
        json.key("class")
        json.string(op.object.className)
        json.key("key")
        write(op.object.key.value, to: &json)
        if let property = op.change.property {
            json.key("prop")
            json.string(property)
        }
        switch op.change {
        case .create(let values):
            json.key("values")
            json.openObject()
            for name in values.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
                json.key(name)
                write(values[name] ?? .null, to: &json)
            }
            json.closeObject()
        case .delete:
            break
        case .setProperty(_, let value), .setAdd(_, let value), .setRemove(_, let value):
            json.key("value")
            write(value, to: &json)
        case .listInsert(_, let position, let value):
            json.key("pos")
            json.string(position.key)
            json.key("value")
            write(value, to: &json)
        case .listRemove(_, let element):
            json.key("elem")
            json.string(element.text)
        case .listMove(_, let element, let position):
            json.key("elem")
            json.string(element.text)
            json.key("pos")
            json.string(position.key)
        case .listSet(_, let element, let value):
            json.key("elem")
            json.string(element.text)
            json.key("value")
            write(value, to: &json)
        case .mapSet(_, let key, let value):
            json.key("mapKey")
            json.string(key)
            json.key("value")
            write(value, to: &json)
        case .mapRemove(_, let key):
            json.key("mapKey")
            json.string(key)
        }
        json.closeObject()
    }

    /// A value: null, booleans, ints and strings as JSON's own; other types as an object with one
    /// member naming the type.
    static func write(_ value: SyncValue, to json: inout JSONWriter) {
        func tagged(_ tag: String, _ body: (inout JSONWriter) -> Void) {
            json.openObject()
            json.key(tag)
            body(&json)
            json.closeObject()
        }
        switch value {
        case .null: json.raw("null")
        case .bool(let v): json.raw(v ? "true" : "false")
        case .int(let v): json.raw(String(v))
        case .string(let v): json.string(v)
        case .double(let v):
            tagged("double") { json in
                if v.isNaN { json.string("nan") } else if v.isInfinite { json.string(v < 0 ? "-inf" : "inf") } else { json.raw(String(v)) }
            }
        case .data(let v): tagged("data") { $0.string(Base64.encode(v)) }
        case .date(let v):
            tagged("date") { json in
                json.openArray()
                json.raw(String(v.seconds))
                json.raw(String(v.nanoseconds))
                json.closeArray()
            }
        case .objectId(let v): tagged("oid") { $0.string(v.hex) }
        case .uuid(let v): tagged("uuid") { $0.string(v.text) }
        case .decimal128(let v): tagged("decimal") { $0.string(v.text) }
        case .link(let v):
            tagged("link") { json in
                json.openObject()
                json.key("class")
                json.string(v.className)
                json.key("key")
                write(v.key.value, to: &json)
                json.closeObject()
            }
        }
    }

    // MARK: Decoding

    /// Decodes JSON lines: one changeset a line, lines ended by a line feed (the last one's may
    /// be missing).
    ///
    /// - Throws: `SyncError(.malformedEncoding)` naming the line (from 1) and the field, for the
    ///   first line that is not a valid changeset, an empty line, or a line over the limits.
    public static func decode(_ text: String, limits: ChangesetLimits = ChangesetLimits()) throws(SyncError) -> [Changeset] {
        try decode(bytes: Array(text.utf8), limits: limits)
    }

    /// Decodes JSON lines from bytes, as `decode(_:limits:)` does; bytes that are not UTF-8 are
    /// an error.
    public static func decode(bytes: [UInt8], limits: ChangesetLimits = ChangesetLimits()) throws(SyncError) -> [Changeset] {
        var result: [Changeset] = []
        var start = 0
        var line = 1
        while start < bytes.count {
            var end = start
            while end < bytes.count, bytes[end] != 0x0A { end += 1 }
            result.append(try decodeLine(bytes, start..<end, line: line, limits: limits))
            start = end + 1
            line += 1
        }
        return result
    }

    /// Decodes one line (without its line feed).
    ///
    /// - Parameter line: the line's number, for messages.
    /// - Throws: `SyncError(.malformedEncoding)` naming the line and the field.
    public static func decodeLine(_ text: String, line: Int = 1, limits: ChangesetLimits = ChangesetLimits()) throws(SyncError) -> Changeset {
        let bytes = Array(text.utf8)
        return try decodeLine(bytes, 0..<bytes.count, line: line, limits: limits)
    }

    private static func decodeLine(_ bytes: [UInt8], _ range: Range<Int>, line: Int, limits: ChangesetLimits) throws(SyncError) -> Changeset {
        guard !range.isEmpty else { throw SyncError(.malformedEncoding, "line \(line): an empty line; expected a changeset") }
        guard range.count <= limits.maxLineBytes else {
            throw SyncError(.malformedEncoding, "line \(line): \(range.count) bytes, more than the \(limits.maxLineBytes) a line may have")
        }
        let json: JSONValue
        do {
            json = try JSONReader.parse(bytes, range, maxDepth: limits.maxDepth, maxStringBytes: limits.maxStringBytes)
        } catch {
            throw SyncError(.malformedEncoding, "line \(line), byte \(error.offset - range.lowerBound + 1): \(error.message)")
        }
        return try ChangesetDecoder(line: line, limits: limits).changeset(json)
    }
}

/// Reads a changeset from parsed JSON, field by field, naming the field of every error.
struct ChangesetDecoder {
    /// Where the JSON came from, first in every message: `line 3`.
    let context: String
    let limits: ChangesetLimits

    init(line: Int, limits: ChangesetLimits) {
        self.init(context: "line \(line)", limits: limits)
    }

    init(context: String, limits: ChangesetLimits) {
        self.context = context
        self.limits = limits
    }

    private static let kinds = ["create", "set", "delete", "list.insert", "list.remove", "list.move", "list.set",
                                "set.add", "set.remove", "map.set", "map.remove"]

    func fail(_ field: String, _ message: String) -> SyncError {
        SyncError(.malformedEncoding, "\(context): field '\(field)': \(message)")
    }

    /// The members of an object that has exactly the members `required`.
    func members(_ value: JSONValue, _ field: String, _ required: [String]) throws(SyncError) -> [String: JSONValue] {
        guard case .object(let list) = value else { throw fail(field, "expected an object, got \(value.kindName)") }
        var found: [String: JSONValue] = [:]
        for (name, member) in list {
            guard required.contains(name) else {
                throw fail(field, "unknown member '\(name.prefix(80))'; expected \(required.map { "'\($0)'" }.joined(separator: ", "))")
            }
            found[name] = member
        }
        for name in required where found[name] == nil {
            throw fail(field, "missing member '\(name)'")
        }
        return found
    }

    func member(_ members: [String: JSONValue], _ name: String, _ field: String) throws(SyncError) -> JSONValue {
        guard let value = members[name] else { throw fail(field, "missing member '\(name)'") }
        return value
    }

    func string(_ value: JSONValue, _ field: String) throws(SyncError) -> String {
        guard case .string(let s) = value else { throw fail(field, "expected a string, got \(value.kindName)") }
        return s
    }

    /// An integer of type `T`: a JSON number without fraction or exponent, within T's range.
    func integer<T: FixedWidthInteger>(_ value: JSONValue, _ field: String, as type: T.Type) throws(SyncError) -> T {
        guard case .number(let text) = value else { throw fail(field, "expected an integer, got \(value.kindName)") }
        guard !text.utf8.contains(where: { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }) else {
            throw fail(field, "expected an integer, got \(text.prefix(40))")
        }
        guard let v = T(text) else {
            throw fail(field, "integer \(text.prefix(40)) is out of the 64-bit \(T.isSigned ? "signed" : "unsigned") range")
        }
        return v
    }

    func int64(_ value: JSONValue, _ field: String) throws(SyncError) -> Int64 {
        try integer(value, field, as: Int64.self)
    }

    func name(_ value: JSONValue, _ field: String, _ what: String) throws(SyncError) -> String {
        let s = try string(value, field)
        guard SyncName.isValid(s) else {
            throw fail(field, "invalid \(what) name '\(s.prefix(80))': expected an ASCII letter or '_', then letters, digits or '_', at most \(SyncName.maxLength) bytes")
        }
        return s
    }

    func clock(_ value: JSONValue, _ field: String) throws(SyncError) -> SyncClock {
        let text = try string(value, field)
        do {
            return try SyncClock(text: text)
        } catch {
            throw fail(field, error.message)
        }
    }

    func position(_ value: JSONValue, _ field: String) throws(SyncError) -> ListPosition {
        do {
            return try ListPosition(try string(value, field))
        } catch where error.code == .invalidValue {
            throw fail(field, error.message)
        }
    }

    func changeset(_ json: JSONValue) throws(SyncError) -> Changeset {
        let top = try members(json, "changeset", ["client", "version", "clock", "ops"])
        let client = try integer(try member(top, "client", "client"), "client", as: UInt64.self)
        let version = try integer(try member(top, "version", "version"), "version", as: UInt64.self)
        let commitClock = try clock(try member(top, "clock", "clock"), "clock")
        guard case .array(let list) = try member(top, "ops", "ops") else {
            throw fail("ops", "expected an array, got \(top["ops"]?.kindName ?? "nothing")")
        }
        guard list.count <= limits.maxOperations else {
            throw fail("ops", "\(list.count) operations, more than the \(limits.maxOperations) a changeset may have")
        }
        var ops: [SyncOperation] = []
        ops.reserveCapacity(list.count)
        for (i, item) in list.enumerated() {
            ops.append(try operation(item, "ops[\(i)]"))
        }
        do {
            return try Changeset(clientId: client, clientVersion: version, clock: commitClock, operations: ops)
        } catch {
            throw SyncError(.malformedEncoding, "\(context): \(error.message)")
        }
    }

    func operation(_ json: JSONValue, _ field: String) throws(SyncError) -> SyncOperation {
        guard case .object(let list) = json else { throw fail(field, "expected an object, got \(json.kindName)") }
        guard let kindValue = list.first(where: { $0.0 == "op" })?.1 else { throw fail(field, "missing member 'op'") }
        let kind = try string(kindValue, field + ".op")
        let common = ["op", "clock", "class", "key"]
        let extra: [String]
        switch kind {
        case "create": extra = ["values"]
        case "set", "set.add", "set.remove": extra = ["prop", "value"]
        case "delete": extra = []
        case "list.insert": extra = ["prop", "pos", "value"]
        case "list.remove": extra = ["prop", "elem"]
        case "list.move": extra = ["prop", "elem", "pos"]
        case "list.set": extra = ["prop", "elem", "value"]
        case "map.set": extra = ["prop", "mapKey", "value"]
        case "map.remove": extra = ["prop", "mapKey"]
        default:
            throw fail(field + ".op", "unknown operation kind '\(kind.prefix(40))'; expected \(Self.kinds.joined(separator: ", "))")
        }
        let m = try members(json, field, common + extra)
        let opClock = try clock(try member(m, "clock", field), field + ".clock")
        let className = try name(try member(m, "class", field), field + ".class", "class")
        let key = try primaryKey(try member(m, "key", field), field + ".key")
        let object: SyncObjectRef
        do {
            object = try SyncObjectRef(className: className, key: key)
        } catch {
            throw fail(field + ".class", error.message)
        }
        // Fields that only some kinds have; `members` above made sure each kind has its own.
        func prop() throws(SyncError) -> String { try name(try member(m, "prop", field), field + ".prop", "property") }
        func value() throws(SyncError) -> SyncValue { try self.value(try member(m, "value", field), field + ".value") }
        func element() throws(SyncError) -> SyncClock { try clock(try member(m, "elem", field), field + ".elem") }
        func pos() throws(SyncError) -> ListPosition { try position(try member(m, "pos", field), field + ".pos") }
        func mapKey() throws(SyncError) -> String { try string(try member(m, "mapKey", field), field + ".mapKey") }
        let change: SyncOperation.Change
        switch kind {
        case "create": change = .create(values: try createValues(try member(m, "values", field), field + ".values"))
        case "set": change = .setProperty(try prop(), try value())
        case "delete": change = .delete
        case "list.insert": change = .listInsert(property: try prop(), position: try pos(), value: try value())
        case "list.remove": change = .listRemove(property: try prop(), element: try element())
        case "list.move": change = .listMove(property: try prop(), element: try element(), position: try pos())
        case "list.set": change = .listSet(property: try prop(), element: try element(), value: try value())
        case "set.add": change = .setAdd(property: try prop(), value: try value())
        case "set.remove": change = .setRemove(property: try prop(), value: try value())
        case "map.set": change = .mapSet(property: try prop(), key: try mapKey(), value: try value())
        default: change = .mapRemove(property: try prop(), key: try mapKey())
        }
        do {
            return try SyncOperation(clock: opClock, object: object, change: change)
        } catch {
            throw fail(field, error.message)
        }
    }

    func createValues(_ json: JSONValue, _ field: String) throws(SyncError) -> [String: SyncValue] {
        guard case .object(let list) = json else { throw fail(field, "expected an object, got \(json.kindName)") }
        var values: [String: SyncValue] = [:]
        for (property, item) in list {
            let path = field + "." + property.prefix(80)
            guard SyncName.isValid(property) else { throw fail(path, "invalid property name") }
            values[property] = try value(item, path)
        }
        return values
    }

    func primaryKey(_ json: JSONValue, _ field: String) throws(SyncError) -> SyncPrimaryKey {
        let v = try value(json, field)
        guard let key = SyncPrimaryKey(v) else { throw fail(field, "a primary key is an int, string, ObjectId or UUID, got \(v.typeName)") }
        return key
    }

    func value(_ json: JSONValue, _ field: String) throws(SyncError) -> SyncValue {
        switch json {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .number: return .int(try int64(json, field))
        case .string(let s): return .string(s)
        case .array: throw fail(field, "expected a value, got an array")
        case .object(let list):
            guard list.count == 1, let (tag, body) = list.first else {
                throw fail(field, "a typed value is an object with one member naming its type, got \(list.count) members")
            }
            return try tagged(tag, body, field + "." + tag.prefix(40))
        }
    }

    private func tagged(_ tag: String, _ body: JSONValue, _ field: String) throws(SyncError) -> SyncValue {
        do throws(SyncError) {
            switch tag {
            case "double":
                switch body {
                case .string("nan"): return .double(.nan)
                case .string("inf"): return .double(.infinity)
                case .string("-inf"): return .double(-.infinity)
                case .number(let text):
                    guard let d = Double(text), d.isFinite else { throw fail(field, "number \(text.prefix(40)) is out of a double's range") }
                    return .double(d)
                default:
                    throw fail(field, "expected a number or \"nan\", \"inf\", \"-inf\", got \(body.kindName)")
                }
            case "data":
                guard let data = Base64.decode(try string(body, field)) else { throw fail(field, "expected base64 text (RFC 4648, padded)") }
                return .data(data)
            case "date":
                guard case .array(let parts) = body, parts.count == 2 else { throw fail(field, "expected [seconds, nanoseconds]") }
                let seconds = try int64(parts[0], field + "[0]")
                guard let nanos = Int32(exactly: try int64(parts[1], field + "[1]")) else { throw fail(field + "[1]", "nanoseconds out of range") }
                return .date(try SyncDate(seconds: seconds, nanoseconds: nanos))
            case "oid": return .objectId(try SyncObjectId(hex: try string(body, field)))
            case "uuid": return .uuid(try SyncUUID(text: try string(body, field)))
            case "decimal": return .decimal128(try SyncDecimal128(try string(body, field)))
            case "link":
                let m = try members(body, field, ["class", "key"])
                let className = try name(try member(m, "class", field), field + ".class", "class")
                return .link(try SyncObjectRef(className: className, key: try primaryKey(try member(m, "key", field), field + ".key")))
            default:
                throw fail(field, "unknown value type '\(tag.prefix(40))'; expected double, data, date, oid, uuid, decimal or link")
            }
        } catch where error.code == .invalidValue {
            throw fail(field, error.message)
        }
    }
}
