// The JSON notation of a schema (after Realm JS), read and written: an object keyed by class
// name, each class {"primaryKey", "embedded", "properties", "indexed", "fulltext"}, each property
// a type string ("int?", "Dog[]", "@links(Person.dogs)") or an object ({"type": "int",
// "optional": true, "indexed": true}). The catalog form adds the stable keys.

extension Schema {
    /// Parses the schema notation from JSON text. Throws `CoveError(.schema)` for JSON that does
    /// not parse (with its line and column) and for every rule of `init(json:)`.
    public init(jsonText: String) throws(CoveError) {
        let value: JSONValue
        do {
            value = try JSONValue(parsing: jsonText)
        } catch {
            throw CoveError(.schema, "schema: \(error.message)")
        }
        try self.init(json: value)
    }

    /// Reads the schema notation: an object keyed by class name, each class an object with
    /// - "properties" (required): an object keyed by property name, each a type string or an
    ///   object {"type": <type string or Realm JS kind>, "optional", "indexed", "fulltext",
    ///   "objectType", "property"};
    /// - "primaryKey": a property name or null; "embedded": a bool;
    /// - "indexed", "fulltext": arrays of property names.
    /// Type strings: a primitive (bool, int, float, double, string, data, date, decimal128,
    /// objectId, uuid, mixed) or a class name, then '?' for optional, then "[]" (list), "<>"
    /// (set) or "{}" (map); or "@links(Class.property)". Throws `CoveError(.schema)` naming the
    /// class and the property for an unknown member, a duplicate name, a wrong JSON kind, an
    /// unknown type, and every rule of `validate()`.
    public init(json: JSONValue) throws(CoveError) {
        try self.init(json: json, withKeys: false)
    }

    init(json: JSONValue, withKeys: Bool) throws(CoveError) {
        guard case .object(let members) = json else {
            throw CoveError(.schema, "a schema is a JSON object keyed by class name, got \(json.kindName)")
        }
        var seen = Set<String>()
        var classes: [ObjectSchema] = []
        for m in members {
            guard seen.insert(m.key).inserted else {
                throw CoveError(.schema, "class '\(m.key)' is declared twice")
            }
            classes.append(try Schema.parseClass(name: m.key, m.value, withKeys: withKeys))
        }
        try self.init(classes)
    }

    private static func parseClass(name: String, _ json: JSONValue, withKeys: Bool) throws(CoveError) -> ObjectSchema {
        guard case .object(let members) = json else {
            throw CoveError(.schema, "class '\(name)' is a JSON object with \"properties\", got \(json.kindName)")
        }
        var seen = Set<String>()
        for m in members {
            guard seen.insert(m.key).inserted else {
                throw CoveError(.schema, "class '\(name)' has \(JSONValue.quoted(m.key)) twice")
            }
            let allowed = ["properties", "primaryKey", "embedded", "indexed", "fulltext"] + (withKeys ? ["key"] : [])
            guard allowed.contains(m.key) else {
                throw CoveError(.schema, "class '\(name)' has unknown member \(JSONValue.quoted(m.key)) (expected \(allowed.map { "\"\($0)\"" }.joined(separator: ", ")))")
            }
        }
        guard case .object(let propertyMembers)? = json["properties"] else {
            throw CoveError(.schema, "class '\(name)' needs \"properties\", an object keyed by property name")
        }
        var primaryKey: String?
        switch json["primaryKey"] {
        case nil, .null?: primaryKey = nil
        case .string(let s)?: primaryKey = s
        case let other?: throw CoveError(.schema, "\"primaryKey\" of class '\(name)' is a property name, got \(other.kindName)")
        }
        var embedded = false
        switch json["embedded"] {
        case nil: break
        case .bool(let b)?: embedded = b
        case let other?: throw CoveError(.schema, "\"embedded\" of class '\(name)' is true or false, got \(other.kindName)")
        }
        var classKey: UInt32?
        if let k = json["key"] {
            guard case .int(let v) = k, v > 0, v <= Int64(UInt32.max) else {
                throw CoveError(.schema, "\"key\" of class '\(name)' is not a class key")
            }
            classKey = UInt32(v)
        }
        var properties: [Property] = []
        var seenProperties = Set<String>()
        for m in propertyMembers {
            guard seenProperties.insert(m.key).inserted else {
                throw CoveError(.schema, "property '\(m.key)' of class '\(name)' is declared twice")
            }
            properties.append(try parseProperty(name: m.key, m.value, className: name, withKeys: withKeys))
        }
        for (listName, fullText) in [("indexed", false), ("fulltext", true)] {
            guard let list = json[listName] else { continue }
            guard case .array(let items) = list else {
                throw CoveError(.schema, "\"\(listName)\" of class '\(name)' is an array of property names, got \(list.kindName)")
            }
            for item in items {
                guard case .string(let p) = item else {
                    throw CoveError(.schema, "\"\(listName)\" of class '\(name)' is an array of property names, got \(item.kindName)")
                }
                guard let i = properties.firstIndex(where: { $0.name == p }) else {
                    throw CoveError(.schema, "\"\(listName)\" of class '\(name)' names property '\(p)', which the class does not have")
                }
                if fullText { properties[i].isFullText = true } else { properties[i].isIndexed = true }
            }
        }
        return ObjectSchema(className: name, properties: properties, primaryKey: primaryKey,
                            isEmbedded: embedded, classKey: classKey)
    }

    /// Realm JS's kinds in the object form of a property, with "objectType" naming the element.
    private static let realmJSKinds: [String: CollectionKind] = [
        "list": .list, "set": .set, "dictionary": .map, "object": .none,
    ]

    private static func parseProperty(name: String, _ json: JSONValue, className: String, withKeys: Bool) throws(CoveError) -> Property {
        let what = "property '\(name)' of class '\(className)'"
        func unknownType(_ text: String) -> CoveError {
            CoveError(.schema, "\(what) has unknown type \(JSONValue.quoted(text)) (expected a type such as \"int\", \"string?\", \"Dog\", \"int[]\", \"string<>\", \"double{}\" or \"@links(Class.property)\")")
        }
        switch json {
        case .string(let text):
            guard let parsed = Property.parseNotation(text) else { throw unknownType(text) }
            return Property(name: name, type: parsed.type, collection: parsed.collection, isOptional: parsed.optional)
        case .object(let members):
            var seen = Set<String>()
            let allowed = ["type", "optional", "indexed", "fulltext", "objectType", "property"] + (withKeys ? ["key"] : [])
            for m in members {
                guard seen.insert(m.key).inserted else {
                    throw CoveError(.schema, "\(what) has \(JSONValue.quoted(m.key)) twice")
                }
                guard allowed.contains(m.key) else {
                    throw CoveError(.schema, "\(what) has unknown member \(JSONValue.quoted(m.key)) (expected \(allowed.map { "\"\($0)\"" }.joined(separator: ", ")))")
                }
            }
            func flag(_ key: String) throws(CoveError) -> Bool {
                switch json[key] {
                case nil: return false
                case .bool(let b)?: return b
                case let other?: throw CoveError(.schema, "\"\(key)\" of \(what) is true or false, got \(other.kindName)")
                }
            }
            func text(_ key: String) throws(CoveError) -> String? {
                switch json[key] {
                case nil: return nil
                case .string(let s)?: return s
                case let other?: throw CoveError(.schema, "\"\(key)\" of \(what) is a string, got \(other.kindName)")
                }
            }
            guard let typeText = try text("type") else {
                throw CoveError(.schema, "\(what) needs \"type\"")
            }
            var parsed: (type: PropertyType, collection: CollectionKind, optional: Bool)
            if let kind = realmJSKinds[typeText] {
                guard let element = try text("objectType") else {
                    throw CoveError(.schema, "\(what) of type \"\(typeText)\" needs \"objectType\"")
                }
                guard let e = Property.parseNotation(element), e.collection == .none, !(e.type.name.hasPrefix("@")) else {
                    throw unknownType(element)
                }
                parsed = (e.type, kind, e.optional)
            } else if typeText == "linkingObjects" {
                guard let origin = try text("objectType"), let originProperty = try text("property") else {
                    throw CoveError(.schema, "\(what) of type \"linkingObjects\" needs \"objectType\" and \"property\"")
                }
                parsed = (.linkingObjects(origin, property: originProperty), .none, false)
            } else {
                guard let p = Property.parseNotation(typeText) else { throw unknownType(typeText) }
                parsed = p
            }
            var key: Int64?
            if let k = json["key"] {
                guard case .int(let v) = k, v > 0 else {
                    throw CoveError(.schema, "\"key\" of \(what) is not a property key")
                }
                key = v
            }
            let optional = try flag("optional")
            let indexed = try flag("indexed")
            let fullText = try flag("fulltext")
            return Property(name: name, type: parsed.type, collection: parsed.collection,
                            isOptional: parsed.optional || optional,
                            isIndexed: indexed, isFullText: fullText, key: key)
        default:
            throw CoveError(.schema, "\(what) is a type string or an object with \"type\", got \(json.kindName)")
        }
    }

    /// The schema in its canonical notation: classes and properties in declared order, each
    /// property a type string (`Property.typeNotation`), "primaryKey" when there is one,
    /// "embedded" only when true, "indexed" and "fulltext" only when not empty (the primary key
    /// is indexed without being listed). `Schema(json: s.json())` equals `s`.
    public func json() -> JSONValue {
        jsonValue(withKeys: false)
    }

    /// The canonical notation as JSON text (see `json()`), compact or pretty.
    public func jsonText(pretty: Bool = false) -> String {
        json().serialized(pretty: pretty)
    }

    func jsonValue(withKeys: Bool) -> JSONValue {
        .object(classes.map { cls in
            var members: [JSONMember] = []
            if withKeys, let k = cls.classKey { members.append(JSONMember("key", .int(Int64(k)))) }
            if let pk = cls.primaryKey { members.append(JSONMember("primaryKey", .string(pk))) }
            if cls.isEmbedded { members.append(JSONMember("embedded", .bool(true))) }
            members.append(JSONMember("properties", .object(cls.properties.map { p in
                if withKeys, let k = p.key {
                    return JSONMember(p.name, .object([JSONMember("type", .string(p.typeNotation)), JSONMember("key", .int(k))]))
                }
                return JSONMember(p.name, .string(p.typeNotation))
            })))
            let indexed = cls.properties.filter { $0.isIndexed && !$0.isPrimaryKey }.map { JSONValue.string($0.name) }
            if !indexed.isEmpty { members.append(JSONMember("indexed", .array(indexed))) }
            let fullText = cls.properties.filter(\.isFullText).map { JSONValue.string($0.name) }
            if !fullText.isEmpty { members.append(JSONMember("fulltext", .array(fullText))) }
            return JSONMember(cls.className, .object(members))
        })
    }

    /// The form the file's catalog stores: `{"nextClassKey": n, "nextPropertyKey": m,
    /// "classes": <the notation with keys>}`, where each class has "key" and each property is
    /// `{"type": ..., "key": k}`. Read back with `init(catalog:)`.
    public func catalogJSON() -> JSONValue {
        .object([
            JSONMember("nextClassKey", .int(Int64(nextClassKey))),
            JSONMember("nextPropertyKey", .int(nextPropertyKey)),
            JSONMember("classes", jsonValue(withKeys: true)),
        ])
    }

    /// Reads the catalog form written by `catalogJSON()`, keys included. Throws
    /// `CoveError(.schema)` when it is not of that form or breaks a rule of the notation.
    public init(catalog: JSONValue) throws(CoveError) {
        guard case .int(let nc)? = catalog["nextClassKey"], nc > 0, nc <= Int64(UInt32.max),
              case .int(let np)? = catalog["nextPropertyKey"], np > 0,
              let classes = catalog["classes"] else {
            throw CoveError(.schema, "catalog schema needs \"nextClassKey\", \"nextPropertyKey\" and \"classes\"")
        }
        try self.init(json: classes, withKeys: true)
        nextClassKey = UInt32(nc)
        nextPropertyKey = np
        for cls in self.classes {
            if let k = cls.classKey, k >= nextClassKey {
                throw CoveError(.schema, "catalog schema: key \(k) of class '\(cls.className)' is not below nextClassKey \(nextClassKey)")
            }
            for p in cls.properties {
                if let k = p.key, k >= nextPropertyKey {
                    throw CoveError(.schema, "catalog schema: key \(k) of property '\(p.name)' of class '\(cls.className)' is not below nextPropertyKey \(nextPropertyKey)")
                }
            }
        }
    }
}
