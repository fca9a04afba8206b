// Objects as JSON for `cove dump` and `cove query`, and back for `cove import`, such that a dump
// of a whole file loads into a new file that dumps the same.
//
// It is ObjectJSON's form (docs/cli.md has the table) with what a round trip needs on top:
//   - every object of a class without a primary key carries "$ref": its number in its class
//     (0, 1, ... in the order the dump lists them); a link to such an object is {"$ref": n}
//   - a mixed value keeps its type: {"$double": "NaN"} for a double JSON cannot write,
//     {"$float": x} for a float, {"$link": {"class": C, "primaryKey": k}} or
//     {"$link": {"class": C, "$ref": n}} for a link, at any depth of a nested list (an array)
//     or dictionary (an object, or {"$dictionary": {...}} when a key starts with "$")
// Loading takes two passes: the first creates every object with its plain values, the second
// sets links, collections, embedded objects and mixed values, so links may point forward and
// in cycles.
@_spi(CoveBindings) import Cove

/// Writes objects as JSON.
final class DumpEncoder {
    let realm: Realm
    /// Per class without a primary key: object key → its `$ref`.
    private var refs: [String: [Int64: Int64]] = [:]

    init(_ realm: Realm) {
        self.realm = realm
    }

    /// The object's members: `$class` when asked, `$ref` when asked and its class has no
    /// primary key, then its properties in declared order (backlinks left out).
    func encode(_ object: DynamicObject, withClass: Bool = false, withRef: Bool = false) throws(CoveError) -> JSONValue {
        let cls = object.objectSchema
        var members: [JSONMember] = []
        if withClass { members.append(JSONMember("$class", .string(cls.className))) }
        if withRef && cls.primaryKey == nil && !cls.isEmbedded {
            members.append(JSONMember("$ref", .int(try ref(of: object))))
        }
        for p in cls.properties where !p.isBacklinks {
            members.append(JSONMember(p.name, try property(p, of: object)))
        }
        return .object(members)
    }

    /// Property `p` of `object` as JSON: a collection whole.
    func property(_ p: Property, of object: DynamicObject) throws(CoveError) -> JSONValue {
        switch p.collection {
        case .none:
            return try value(try object.value(forKey: p.name), p)
        case .list:
            return .array(try object.dynamicList(p.name).values().map { (v) throws(CoveError) in try value(v, p) })
        case .set:
            return .array(try object.dynamicMutableSet(p.name).values().map { (v) throws(CoveError) in try value(v, p) })
        case .map:
            return .object(try object.dynamicMap(p.name).entries().map { (e) throws(CoveError) in JSONMember(e.key, try value(e.value, p)) })
        }
    }

    /// One value of property `p` (an element, for a collection).
    func value(_ v: Value, _ p: Property) throws(CoveError) -> JSONValue {
        if p.type == .mixed { return try mixed(v, p) }
        guard p.isLink, case .link(let link) = v else { return try ObjectJSON.encode(v, p, realm) }
        guard let target = try realm.object(for: link) else { return .null }
        if target.objectSchema.isEmbedded { return try encode(target) }
        return try reference(to: target)
    }

    /// A link's target: its primary key, or {"$ref": n}.
    private func reference(to target: DynamicObject) throws(CoveError) -> JSONValue {
        if let pk = target.objectSchema.primaryKeyProperty {
            return try ObjectJSON.encode(try target.value(forKey: pk.name), pk, realm)
        }
        return .object([JSONMember("$ref", .int(try ref(of: target)))])
    }

    private func mixed(_ v: Value, _ p: Property) throws(CoveError) -> JSONValue {
        func tagged(_ tag: String, _ inner: JSONValue) -> JSONValue { .object([JSONMember(tag, inner)]) }
        func number(_ d: Double) -> JSONValue {
            d.isNaN ? .string("NaN") : d.isInfinite ? .string(d < 0 ? "-Infinity" : "Infinity") : .double(d)
        }
        if let collection = try ObjectJSON.encodeCollection(v, element: { (e) throws(CoveError) in try mixed(e, p) }) {
            return collection
        }
        switch v {
        case .double(let d) where !d.isFinite:
            return tagged("$double", number(d))
        case .float(let f):
            return tagged("$float", number(Double(f)))
        case .link(let link):
            guard let target = try realm.object(for: link) else { return .null }
            let cls = target.objectSchema
            var inner = [JSONMember("class", .string(cls.className))]
            if cls.primaryKey != nil {
                inner.append(JSONMember("primaryKey", try reference(to: target)))
            } else {
                inner.append(JSONMember("$ref", .int(try ref(of: target))))
            }
            return tagged("$link", .object(inner))
        default:
            return try ObjectJSON.encode(v, p, realm)
        }
    }

    /// The `$ref` of an object of a class without a primary key.
    private func ref(of object: DynamicObject) throws(CoveError) -> Int64 {
        let name = object.objectSchema.className
        if refs[name] == nil {
            var numbers: [Int64: Int64] = [:]
            for (i, o) in try realm.dynamicObjects(name).enumerated() { numbers[o.objectKey] = Int64(i) }
            refs[name] = numbers
        }
        guard let n = refs[name]?[object.objectKey] else {
            throw CoveError(.notFound, "object \(object.objectKey) of \(name) is gone")
        }
        return n
    }

    /// The value at a column path of `object`: a property name, or names joined by dots through
    /// to-one links and embedded objects (`dog.name`); `$key` is the object's key.
    func column(_ path: String, of object: DynamicObject) throws(CoveError) -> JSONValue {
        var current = object
        let names = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        for (i, name) in names.enumerated() {
            if name == "$key" && i == names.count - 1 { return .int(current.objectKey) }
            let cls = current.objectSchema
            guard let p = cls[property: name] else {
                throw CoveError(.invalidArgument, "class '\(cls.className)' has no property '\(name)' (column '\(path)')")
            }
            if i == names.count - 1 {
                guard p.isBacklinks else { return try property(p, of: current) }
                return .array(try current.linkingObjects(name).map { (o) throws(CoveError) in try reference(to: o) })
            }
            guard p.isLink, p.collection == .none else {
                throw CoveError(.invalidArgument, "column '\(path)': '\(name)' is not a link to one object")
            }
            guard let next = try current.linkedObject(name) else { return .null }
            current = next
        }
        return .null
    }
}

/// One object to load: its line, class, `$ref` and property members.
struct ImportItem {
    let line: Int
    let className: String
    let ref: Int64?
    let members: [JSONMember]
}

/// Creates and fills objects from JSON in two passes (see the top of this file).
final class Loader {
    let realm: Realm
    /// Per class: `$ref` → the key of the object created for it.
    private var refs: [String: [Int64: Int64]] = [:]

    init(_ realm: Realm) {
        self.realm = realm
    }

    /// The item a JSON line holds: of class `className` (nil: the line's `$class` says).
    static func item(_ json: JSONValue, line: Int, className: String?, schema: Schema) throws(CoveError) -> ImportItem {
        guard case .object(let all) = json else {
            throw CoveError(.invalidArgument, "an object must be a JSON object, got \(json.kindName)")
        }
        var name = className
        var ref: Int64?
        var members: [JSONMember] = []
        for m in all {
            switch m.key {
            case "$class":
                guard case .string(let c) = m.value else { throw CoveError(.invalidArgument, "$class takes a class name") }
                if let className, c != className { throw CoveError(.invalidArgument, "$class is '\(c)', not '\(className)'") }
                name = c
            case "$ref":
                guard case .int(let n) = m.value else { throw CoveError(.invalidArgument, "$ref takes an integer") }
                ref = n
            default:
                members.append(m)
            }
        }
        guard let name else { throw CoveError(.invalidArgument, "no $class member (give a CLASS to load objects without one)") }
        guard let cls = schema[name] else { throw CoveError(.notFound, "no class '\(name)' in the schema") }
        if cls.isEmbedded { throw CoveError(.invalidArgument, "'\(name)' is embedded: its objects load inside their owners") }
        if ref != nil && cls.primaryKey != nil { throw CoveError(.invalidArgument, "'\(name)' has a primary key: its objects take no $ref") }
        var seen = Set<String>()
        for m in members {
            guard let p = cls[property: m.key] else { throw CoveError(.invalidArgument, "class '\(name)' has no property '\(m.key)'") }
            guard seen.insert(m.key).inserted else { throw CoveError(.invalidArgument, "property '\(m.key)' appears twice") }
            if p.isBacklinks { throw CoveError(.invalidArgument, "property '\(p.name)' of class '\(name)' is backlinks: it is computed") }
        }
        return ImportItem(line: line, className: name, ref: ref, members: members)
    }

    /// The first pass: creates the object (or updates the one with the same primary key) with
    /// its plain values; returns its key. Inside a write.
    func create(_ item: ImportItem) throws(CoveError) -> Int64 {
        guard let cls = realm.schema[item.className] else { throw CoveError(.notFound, "no class '\(item.className)' in the schema") }
        var plain: [(String, Value)] = []
        for m in item.members {
            guard let p = cls[property: m.key] else { throw CoveError(.invalidArgument, "class '\(cls.className)' has no property '\(m.key)'") }
            if Self.isPlain(p) && !p.isPrimaryKey { plain.append((p.name, try ObjectJSON.decode(m.value, p, cls, realm))) }
        }
        let object: DynamicObject
        if let pk = cls.primaryKeyProperty {
            guard let given = item.members.first(where: { $0.key == pk.name }) else {
                throw CoveError(.invalidArgument, "a \(cls.className) needs its primary key '\(pk.name)'")
            }
            object = try realm.dynamicCreateOrUpdate(cls.className, primaryKey: try ObjectJSON.decode(given.value, pk, cls, realm), values: plain)
        } else {
            object = try realm.dynamicCreate(cls.className, values: plain)
        }
        if let ref = item.ref {
            guard refs[cls.className]?[ref] == nil else { throw CoveError(.invalidArgument, "a second \(cls.className) with $ref \(ref)") }
            refs[cls.className, default: [:]][ref] = object.objectKey
        }
        return object.objectKey
    }

    /// The second pass: sets what the first left out on the object with key `key`.
    func fill(_ item: ImportItem, key: Int64) throws(CoveError) {
        guard let object = try realm.dynamicObject(ofType: item.className, objectKey: key) else {
            throw CoveError(.notFound, "the \(item.className) of this line is gone")
        }
        let cls = object.objectSchema
        try apply(item.members.filter { m in cls[property: m.key].map { !Self.isPlain($0) } ?? false }, to: object)
    }

    /// Whether the first pass sets `p`: a single value that is neither a link nor mixed.
    private static func isPlain(_ p: Property) -> Bool {
        p.collection == .none && !p.isLink && p.type != .mixed
    }

    /// Sets the members' properties on `object` (collections replaced whole), links resolved
    /// by `decode`.
    func apply(_ members: [JSONMember], to object: DynamicObject) throws(CoveError) {
        try ObjectJSON.apply(members, to: object) { (json, p, cls) throws(CoveError) in try decode(json, p, cls) }
    }

    /// One value of property `p`: links resolved through primary keys, `$ref` and `$key`.
    func decode(_ json: JSONValue, _ p: Property, _ cls: ObjectSchema) throws(CoveError) -> Value {
        if case .null = json { return .null }
        if p.type == .mixed { return try mixed(json, p, cls) }
        guard let targetName = p.type.objectClassName, p.isLink else { return try ObjectJSON.decode(json, p, cls, realm) }
        func bad(_ why: String) -> CoveError {
            CoveError(.invalidArgument, "property '\(p.name)' of class '\(cls.className)' is \(p.typeNotation): \(why)")
        }
        guard let target = realm.schema[targetName] else { throw bad("no class '\(targetName)'") }
        if case .object(let members) = json {
            if members.count == 1, members[0].key == "$ref", case .int(let n) = members[0].value {
                return .link(try referenced(targetName, n, bad))
            }
            if members.count == 1, members[0].key == "$key" { return try ObjectJSON.decode(json, p, cls, realm) }
            if target.isEmbedded { throw bad("embedded objects are created in place") }
            return .link(try ObjectJSON.create(targetName, from: json, in: realm, update: true).link)
        }
        return .link(try primaryKeyTarget(target, json, bad))
    }

    private func referenced(_ className: String, _ n: Int64, _ bad: (String) -> CoveError) throws(CoveError) -> ObjectLink {
        guard let key = refs[className]?[n], let found = try realm.dynamicObject(ofType: className, objectKey: key) else {
            throw bad("no \(className) with $ref \(n) was loaded")
        }
        return found.link
    }

    private func primaryKeyTarget(_ target: ObjectSchema, _ json: JSONValue, _ bad: (String) -> CoveError) throws(CoveError) -> ObjectLink {
        guard let pk = target.primaryKeyProperty else {
            throw bad("\(target.className) has no primary key: link with {\"$ref\": n}, {\"$key\": n} or a nested object")
        }
        let key = try ObjectJSON.decode(json, pk, target, realm)
        guard let found = try realm.dynamicObject(ofType: target.className, forPrimaryKey: key) else {
            throw bad("no \(target.className) object has primary key \(json.description)")
        }
        return found.link
    }

    private func mixed(_ json: JSONValue, _ p: Property, _ cls: ObjectSchema) throws(CoveError) -> Value {
        func bad(_ why: String) -> CoveError {
            CoveError(.invalidArgument, "property '\(p.name)' of class '\(cls.className)' is \(p.typeNotation): \(why)")
        }
        if let collection = try ObjectJSON.decodeCollection(json, bad, element: { (e) throws(CoveError) in try mixed(e, p, cls) }) {
            return collection
        }
        guard case .object(let members) = json, members.count == 1 else { return try ObjectJSON.decode(json, p, cls, realm) }
        func number(_ v: JSONValue) throws(CoveError) -> Double {
            switch v {
            case .int(let i): return Double(i)
            case .double(let d): return d
            case .string("NaN"): return .nan
            case .string("Infinity"): return .infinity
            case .string("-Infinity"): return -.infinity
            default: throw bad("\(members[0].key) takes a number, \"NaN\", \"Infinity\" or \"-Infinity\"")
            }
        }
        let inner = members[0].value
        switch members[0].key {
        case "$double":
            return .double(try number(inner))
        case "$float":
            return .float(Float(try number(inner)))
        case "$link":
            guard case .string(let name)? = inner["class"], let target = realm.schema[name] else {
                throw bad("$link needs the class of an existing object")
            }
            if case .int(let n)? = inner["$ref"] { return .link(try referenced(name, n, bad)) }
            if let key = inner["primaryKey"] { return .link(try primaryKeyTarget(target, key, bad)) }
            return try ObjectJSON.decode(json, p, cls, realm)
        default:
            return try ObjectJSON.decode(json, p, cls, realm)
        }
    }
}
