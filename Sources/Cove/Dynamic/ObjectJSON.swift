// Objects as JSON and back: what `cove dump` prints, what `cove import` loads, and the form the
// query layer's JSON export uses. The property's type says how a value is written, so plain JSON
// serves typed properties; mixed values that JSON cannot tell apart carry a `$` tag.
//
//   bool, int, double, float, string  as JSON (non-finite floats as "NaN", "Infinity", "-Infinity")
//   data                              base64 text
//   date                              ISO 8601 text in UTC with nanoseconds ("2024-03-01T12:00:00.5Z")
//   decimal128                        its decimal text ("19.99")
//   objectId, uuid                    24 hex digits; the canonical 36-character form
//   link                              the target's primary key, or {"$key": n} without one
//   embedded object                   the object itself, nested
//   list, set                         an array; map: an object
//   mixed                             null, bool, int, double and string as JSON; other types as
//                                     {"$date": ...}, {"$decimal": ...}, {"$oid": ...},
//                                     {"$uuid": ...}, {"$binary": ...}, {"$link": {"class": C, "key": n}}
import CoveCore
import FoundationEssentials

public enum ObjectJSON {
    // MARK: Writing

    /// The object's properties as a JSON object in declared order (backlinks left out).
    /// - Throws: `.invalidated` for a deleted object.
    public static func encode(_ object: DynamicObject) throws(CoveError) -> JSONValue {
        var members: [JSONMember] = []
        for p in object.objectSchema.properties where !p.isBacklinks {
            switch p.collection {
            case .none:
                members.append(JSONMember(p.name, try encode(try object.value(forKey: p.name), p, object.realm)))
            case .list:
                members.append(JSONMember(p.name, .array(try object.dynamicList(p.name).values().map { (v) throws(CoveError) in try encode(v, p, object.realm) })))
            case .set:
                members.append(JSONMember(p.name, .array(try object.dynamicMutableSet(p.name).values().map { (v) throws(CoveError) in try encode(v, p, object.realm) })))
            case .map:
                members.append(JSONMember(p.name, .object(try object.dynamicMap(p.name).entries().map { (e) throws(CoveError) in JSONMember(e.key, try encode(e.value, p, object.realm)) })))
            }
        }
        return .object(members)
    }

    /// One value of property `p` as JSON.
    public static func encode(_ value: Value, _ p: Property, _ realm: Realm) throws(CoveError) -> JSONValue {
        if p.type == .mixed { return try encodeMixed(value, realm) }
        switch value {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(i)
        case .float(let f): return number(Double(f))
        case .double(let d): return number(d)
        case .string(let s): return .string(s)
        case .data(let d): return .string(Data(d).base64EncodedString())
        case .timestamp(let t): return .string(t.description)
        case .decimal128(let d): return .string(d.description)
        case .objectId(let o): return .string(o.description)
        case .uuid(let u): return .string(u.uuidString.lowercased())
        case .list, .dictionary:
            return try encodeMixed(value, realm)
        case .link(let link):
            guard let target = try realm.object(for: link) else { return .null }
            if target.objectSchema.isEmbedded { return try encode(target) }
            if let pk = target.objectSchema.primaryKeyProperty {
                return try encode(try target.value(forKey: pk.name), pk, realm)
            }
            return .object([JSONMember("$key", .int(link.objectKey))])
        }
    }

    private static func number(_ d: Double) -> JSONValue {
        if d.isNaN { return .string("NaN") }
        if d.isInfinite { return .string(d < 0 ? "-Infinity" : "Infinity") }
        return .double(d)
    }

    private static func encodeMixed(_ value: Value, _ realm: Realm) throws(CoveError) -> JSONValue {
        func tagged(_ tag: String, _ v: JSONValue) -> JSONValue { .object([JSONMember(tag, v)]) }
        switch value {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(i)
        case .float(let f): return number(Double(f))
        case .double(let d): return number(d)
        case .string(let s): return .string(s)
        case .data(let d): return tagged("$binary", .string(Data(d).base64EncodedString()))
        case .timestamp(let t): return tagged("$date", .string(t.description))
        case .decimal128(let d): return tagged("$decimal", .string(d.description))
        case .objectId(let o): return tagged("$oid", .string(o.description))
        case .uuid(let u): return tagged("$uuid", .string(u.uuidString.lowercased()))
        case .link(let link):
            let name = realm.schema.objectSchema(forClassKey: link.classKey)?.className ?? String(link.classKey)
            return tagged("$link", .object([JSONMember("class", .string(name)), JSONMember("key", .int(link.objectKey))]))
        case .list, .dictionary:
            return try encodeCollection(value) { (e) throws(CoveError) in try encodeMixed(e, realm) }!
        }
    }

    /// A nested collection of a mixed value as JSON, its elements written by `element`: a list
    /// as an array; a dictionary as an object, under "$dictionary" when a key starts with "$"
    /// (which a tag could be). Nil for a value that is not a collection.
    @_spi(CoveBindings)
    public static func encodeCollection(_ value: Value, element: (Value) throws(CoveError) -> JSONValue) throws(CoveError) -> JSONValue? {
        switch value {
        case .list(let elements):
            var items: [JSONValue] = []
            for e in elements { items.append(try element(e)) }
            return .array(items)
        case .dictionary(let entries):
            var members: [JSONMember] = []
            for (k, v) in Value.sortedEntries(entries) { members.append(JSONMember(k, try element(v))) }
            if entries.keys.contains(where: { $0.hasPrefix("$") }) { return .object([JSONMember("$dictionary", .object(members))]) }
            return .object(members)
        default:
            return nil
        }
    }

    /// The nested collection a mixed value's JSON stands for, its elements read by `element`:
    /// an array, an object none of whose keys starts with "$", or {"$dictionary": {...}}. Nil
    /// for anything else (a scalar or a tagged value).
    @_spi(CoveBindings)
    public static func decodeCollection(_ json: JSONValue, _ bad: (String) -> CoveError,
                                        element: (JSONValue) throws(CoveError) -> Value) throws(CoveError) -> Value? {
        var members: [JSONMember]
        switch json {
        case .array(let items):
            var elements: [Value] = []
            for item in items { elements.append(try element(item)) }
            return .list(elements)
        case .object(let m) where !m.contains(where: { $0.key.hasPrefix("$") }):
            members = m
        case .object(let m) where m.count == 1 && m[0].key == "$dictionary":
            guard case .object(let inner) = m[0].value else { throw bad("$dictionary takes an object") }
            members = inner
        default:
            return nil
        }
        var entries: [String: Value] = [:]
        for m in members {
            guard entries.updateValue(try element(m.value), forKey: m.key) == nil else {
                throw bad("key \(JSONValue.quoted(m.key)) appears twice in a dictionary")
            }
        }
        return .dictionary(entries)
    }

    // MARK: Reading

    /// Creates an object of `className` from a JSON object inside a write, or updates the one
    /// with the same primary key when `update` is true. Members name properties; collections
    /// are replaced whole; a link is a primary key (or {"$key": n}) of an existing object, or
    /// a nested JSON object, which is created (embedded objects always are).
    /// - Throws: `.invalidArgument` naming the member that is wrong (not an object, an unknown
    ///   property, a link to nothing, a malformed date), `.wrongType`, `.duplicateKey`.
    @discardableResult
    public static func create(_ className: String, from json: JSONValue, in realm: Realm, update: Bool) throws(CoveError) -> DynamicObject {
        guard let cls = realm.schema[className] else { throw CoveError(.notFound, "no class '\(className)' in the schema") }
        guard case .object(let members) = json else {
            throw CoveError(.invalidArgument, "a \(className) must be a JSON object, got \(json.kindName)")
        }
        var seen = Set<String>()
        for m in members {
            guard cls[property: m.key] != nil else { throw CoveError(.invalidArgument, "class '\(className)' has no property '\(m.key)'") }
            guard seen.insert(m.key).inserted else { throw CoveError(.invalidArgument, "property '\(m.key)' appears twice") }
        }
        // Plain values go into the object's row as it is created; links, collections and
        // embedded objects are applied to it afterwards.
        var plain: [(String, Value)] = []
        var rest: [JSONMember] = []
        for m in members where m.key != cls.primaryKey {
            if let p = cls[property: m.key], p.collection == .none, !p.isLink, !p.isBacklinks {
                plain.append((m.key, try decode(m.value, p, cls, realm)))
            } else {
                rest.append(m)
            }
        }
        let object: DynamicObject
        if let pk = cls.primaryKeyProperty {
            guard let given = json[pk.name] else {
                throw CoveError(.invalidArgument, "a \(className) needs its primary key '\(pk.name)'")
            }
            let key = try decode(given, pk, cls, realm)
            if update {
                object = try realm.dynamicCreateOrUpdate(className, primaryKey: key, values: plain)
            } else {
                object = try realm.dynamicCreate(className, primaryKey: key, values: plain)
            }
        } else {
            object = try realm.dynamicCreate(className, values: plain)
        }
        try apply(rest, to: object)
        return object
    }

    /// Sets the members' properties on `object` (collections replaced whole).
    static func apply(_ members: [JSONMember], to object: DynamicObject) throws(CoveError) {
        let realm = object.realm
        try apply(members, to: object) { (json, p, cls) throws(CoveError) in try decode(json, p, cls, realm) }
    }

    /// `apply(_:to:)` with `decode` making each single value and element: for a loader that
    /// resolves links its own way (`cove import`'s primary keys and `$ref`s).
    @_spi(CoveBindings) public static func apply(_ members: [JSONMember], to object: DynamicObject,
                                                decode: (JSONValue, Property, ObjectSchema) throws(CoveError) -> Value) throws(CoveError) {
        let cls = object.objectSchema
        let realm = object.realm
        for m in members {
            guard let p = cls[property: m.key] else { throw CoveError(.invalidArgument, "class '\(cls.className)' has no property '\(m.key)'") }
            if p.isBacklinks { throw CoveError(.invalidArgument, "property '\(p.name)' of class '\(cls.className)' is backlinks: it is computed") }
            let embedded = try p.type.objectClassName.map { (n) throws(CoveError) in try realm.objectStore().objectSchema(n).isEmbedded } ?? false
            switch p.collection {
            case .none:
                if embedded, case .object(let inner) = m.value {
                    try apply(inner, to: try object.createEmbeddedObject(forProperty: p.name), decode: decode)
                } else {
                    try object.setValue(try decode(m.value, p, cls), forKey: p.name)
                }
            case .list:
                guard case .array(let items) = m.value else { throw expected("an array", m.value, p, cls) }
                let list = try object.dynamicList(p.name)
                try list.removeAll()
                for item in items {
                    if embedded {
                        guard case .object(let inner) = item else { throw expected("an object", item, p, cls) }
                        try apply(inner, to: try list.appendEmbedded(), decode: decode)
                    } else {
                        try list.append(try decode(item, p, cls))
                    }
                }
            case .set:
                guard case .array(let items) = m.value else { throw expected("an array", m.value, p, cls) }
                let set = try object.dynamicMutableSet(p.name)
                try set.removeAll()
                for item in items { try set.insert(try decode(item, p, cls)) }
            case .map:
                guard case .object(let entries) = m.value else { throw expected("an object", m.value, p, cls) }
                let map = try object.dynamicMap(p.name)
                try map.removeAll()
                for e in entries {
                    if embedded, case .object(let inner) = e.value {
                        try apply(inner, to: try map.setEmbedded(forKey: e.key), decode: decode)
                    } else {
                        try map.setValue(try decode(e.value, p, cls), forKey: e.key)
                    }
                }
            }
        }
    }

    private static func expected(_ what: String, _ got: JSONValue, _ p: Property, _ cls: ObjectSchema) -> CoveError {
        CoveError(.invalidArgument, "property '\(p.name)' of class '\(cls.className)' is \(p.typeNotation): expected \(what), got \(got.kindName)")
    }

    /// The value of property `p` (an element, for a collection) that `json` writes.
    public static func decode(_ json: JSONValue, _ p: Property, _ cls: ObjectSchema, _ realm: Realm) throws(CoveError) -> Value {
        func bad(_ why: String) -> CoveError {
            CoveError(.invalidArgument, "property '\(p.name)' of class '\(cls.className)' is \(p.typeNotation): \(why)")
        }
        func text() throws(CoveError) -> String {
            guard case .string(let s) = json else { throw bad("expected a string, got \(json.kindName)") }
            return s
        }
        if case .null = json { return .null }
        switch p.type {
        case .bool:
            guard case .bool(let b) = json else { throw bad("expected true or false, got \(json.kindName)") }
            return .bool(b)
        case .int:
            guard case .int(let i) = json else { throw bad("expected an integer, got \(json.description)") }
            return .int(i)
        case .float, .double:
            switch json {
            case .int(let i): return .double(Double(i))
            case .double(let d): return .double(d)
            case .string("NaN"): return .double(.nan)
            case .string("Infinity"): return .double(.infinity)
            case .string("-Infinity"): return .double(-.infinity)
            default: throw bad("expected a number, got \(json.kindName)")
            }
        case .string:
            return .string(try text())
        case .data:
            guard let d = Data(base64Encoded: try text()) else { throw bad("expected base64 text") }
            return .data([UInt8](d))
        case .date:
            if case .int(let seconds) = json { return .timestamp(Timestamp(seconds: seconds)) }
            return .timestamp(try parseTimestamp(try text(), bad))
        case .decimal128:
            switch json {
            case .int(let i): return .decimal128(Decimal128(i))
            case .double(let d): return .decimal128(Decimal128(d))
            default: return .decimal128(try Decimal128(try text()))
            }
        case .objectId:
            return .objectId(try ObjectId(try text()))
        case .uuid:
            guard let u = UUID(uuidString: try text()) else { throw bad("expected a UUID, got \(json.description)") }
            return .uuid(u)
        case .mixed:
            return try decodeMixed(json, bad, realm)
        case .object(let targetName):
            let store = try realm.objectStore()
            let target = try store.objectSchema(targetName)
            if case .object(let members) = json {
                if members.count == 1, members[0].key == "$key", case .int(let key) = members[0].value {
                    guard let found = try realm.dynamicObject(ofType: targetName, objectKey: key) else {
                        throw bad("no \(targetName) object has key \(key)")
                    }
                    return .link(found.link)
                }
                if target.isEmbedded { throw bad("embedded objects are created in place") }
                return .link(try create(targetName, from: json, in: realm, update: true).link)
            }
            guard let pk = target.primaryKeyProperty else {
                throw bad("\(targetName) has no primary key: link with {\"$key\": n} or a nested object")
            }
            let key = try decode(json, pk, target, realm)
            guard let found = try realm.dynamicObject(ofType: targetName, forPrimaryKey: key) else {
                throw bad("no \(targetName) object has primary key \(json.description)")
            }
            return .link(found.link)
        case .linkingObjects:
            throw bad("backlinks are computed")
        }
    }

    private static func decodeMixed(_ json: JSONValue, _ bad: (String) -> CoveError, _ realm: Realm) throws(CoveError) -> Value {
        switch json {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(i)
        case .double(let d): return .double(d)
        case .string(let s): return .string(s)
        case .array, .object:
            if let collection = try decodeCollection(json, bad, element: { (e) throws(CoveError) in try decodeMixed(e, bad, realm) }) {
                return collection
            }
            guard case .object(let members) = json, members.count == 1 else {
                throw bad("a tagged mixed value has one member ($date, $decimal, $oid, $uuid, $binary, $link, $dictionary)")
            }
            let (tag, inner) = (members[0].key, members[0].value)
            if tag == "$link" {
                guard case .string(let name)? = inner["class"], case .int(let key)? = inner["key"],
                      let found = try realm.dynamicObject(ofType: name, objectKey: key) else {
                    throw bad("$link needs the class and key of an existing object")
                }
                return .link(found.link)
            }
            guard case .string(let s) = inner else { throw bad("\(tag) takes a string") }
            switch tag {
            case "$date": return .timestamp(try parseTimestamp(s, bad))
            case "$decimal": return .decimal128(try Decimal128(s))
            case "$oid": return .objectId(try ObjectId(s))
            case "$uuid":
                guard let u = UUID(uuidString: s) else { throw bad("\(JSONValue.quoted(s)) is not a UUID") }
                return .uuid(u)
            case "$binary":
                guard let d = Data(base64Encoded: s) else { throw bad("$binary takes base64 text") }
                return .data([UInt8](d))
            default: throw bad("unknown tag \(JSONValue.quoted(tag))")
            }
        }
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` (a space may stand for 'T'; the year
    /// may carry a sign and more digits), as `Timestamp.description` writes it.
    static func parseTimestamp(_ s: String, _ bad: (String) -> CoveError) throws(CoveError) -> Timestamp {
        let b = s.utf8Bytes
        var i = 0
        func fail() -> CoveError { bad("\(JSONValue.quoted(s)) is not an ISO 8601 date-time such as 2024-03-01T12:00:00Z") }
        func digits(_ n: Int) throws(CoveError) -> Int64 {
            guard i + n <= b.count else { throw fail() }
            var v: Int64 = 0
            for _ in 0..<n {
                guard b[i] >= 0x30, b[i] <= 0x39 else { throw fail() }
                v = v * 10 + Int64(b[i] - 0x30)
                i += 1
            }
            return v
        }
        func expect(_ c: UInt8) throws(CoveError) {
            guard i < b.count, b[i] == c else { throw fail() }
            i += 1
        }
        var sign: Int64 = 1
        if i < b.count, b[i] == UInt8(ascii: "-") || b[i] == UInt8(ascii: "+") {
            sign = b[i] == UInt8(ascii: "-") ? -1 : 1
            i += 1
        }
        var yearDigits = 0
        while i + yearDigits < b.count, b[i + yearDigits] >= 0x30, b[i + yearDigits] <= 0x39 { yearDigits += 1 }
        guard yearDigits >= 4, yearDigits <= 9 else { throw fail() }
        let year = sign * (try digits(yearDigits))
        try expect(UInt8(ascii: "-"))
        let month = try digits(2)
        try expect(UInt8(ascii: "-"))
        let day = try digits(2)
        guard i < b.count, b[i] == UInt8(ascii: "T") || b[i] == UInt8(ascii: " ") else { throw fail() }
        i += 1
        let hour = try digits(2)
        try expect(UInt8(ascii: ":"))
        let minute = try digits(2)
        try expect(UInt8(ascii: ":"))
        let second = try digits(2)
        var nanos: Int64 = 0
        if i < b.count, b[i] == UInt8(ascii: ".") {
            i += 1
            var n = 0
            while i < b.count, b[i] >= 0x30, b[i] <= 0x39 {
                if n < 9 { nanos = nanos * 10 + Int64(b[i] - 0x30) }
                n += 1
                i += 1
            }
            guard n > 0 else { throw fail() }
            for _ in n..<max(n, 9) { nanos *= 10 }
        }
        var offset: Int64 = 0
        guard i < b.count else { throw fail() }
        if b[i] == UInt8(ascii: "Z") {
            i += 1
        } else if b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
            let east = b[i] == UInt8(ascii: "+")
            i += 1
            let oh = try digits(2)
            try expect(UInt8(ascii: ":"))
            let om = try digits(2)
            offset = (oh * 3600 + om * 60) * (east ? 1 : -1)
        } else {
            throw fail()
        }
        guard i == b.count, (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { throw fail() }
        // Days from the civil date (proleptic Gregorian), on 400-year eras.
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = month > 2 ? month - 3 : month + 9
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset
        // Stored with the nanoseconds of the seconds' sign.
        if seconds < 0 && nanos > 0 {
            return Timestamp(seconds: seconds + 1, nanoseconds: Int32(nanos - 1_000_000_000))
        }
        return Timestamp(seconds: seconds, nanoseconds: Int32(nanos))
    }
}
