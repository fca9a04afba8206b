// QueryBinder: a parsed query bound to a class of the schema. Names become properties, literals
// and arguments become values, and everything docs/query-language.md calls a semantic error (an unknown
// property, a string compared with a number, ordering on bools, a quantifier without a
// collection, two constants compared, ...) is reported here, as `.invalidArgument`, before any
// object is read.
import FoundationEssentials

/// An argument of a query: a value, or a list of them (for `IN $0`).
public enum QueryArgument: Sendable, Equatable {
    case value(Value)
    case list([Value])
}

package indirect enum BoundPredicate: Sendable {
    case constant(Bool)
    case and([BoundPredicate])
    case or([BoundPredicate])
    case not(BoundPredicate)
    case compare(BoundComparison)
}

package struct BoundComparison: Sendable {
    package var left: BoundExpression
    package var op: QueryOperator
    package var options: QueryStringOptions
    package var right: BoundExpression
    /// For `IN` a list of constants without [c]/[d]: its values, normalized, in a hash set, so
    /// a long list costs a lookup per value tested (Cove's decision 6).
    var lookup: Set<Value>?
    /// Whether the comparison tests `@type`: both sides are then type sets
    /// (`QueryTypeAttribute` raw values as ints), equal when they share a type.
    var comparesTypes = false
}

package indirect enum BoundExpression: Sendable {
    case constant(Value)
    case list([Value], QueryQuantifier?)
    case path(BoundPath)
    case subquery(BoundPath, variable: Int, BoundPredicate)
    case arithmetic(QueryArithmetic, BoundExpression, BoundExpression)

    var isConstant: Bool {
        switch self {
        case .constant, .list: return true
        case .arithmetic(_, let a, let b): return a.isConstant && b.isConstant
        default: return false
        }
    }

    /// Whether it is a key path ending in `.@type`.
    var testsType: Bool {
        if case .path(let p) = self { return p.kind == .postfixType }
        return false
    }

    /// The expression for messages: a key path as written.
    var label: String {
        switch self {
        case .path(let p): return "'\(p.text)'"
        case .subquery(let p, _, _): return "a SUBQUERY of '\(p.text)'"
        case .arithmetic: return "an arithmetic expression"
        case .constant, .list: return "a constant"
        }
    }

    /// Whether it can give several values (a collection on the path, a list).
    var isMultiple: Bool {
        switch self {
        case .constant, .subquery: return false
        case .list: return true
        case .path(let p): return p.isMultiple
        case .arithmetic(_, let a, let b): return a.isMultiple || b.isMultiple
        }
    }
}

/// Where a path starts: the object being tested, a SUBQUERY variable, or the element itself
/// (`self`, in a collection of primitives).
package enum PathRoot: Equatable, Sendable {
    case object
    case variable(Int)
    case element
}

package enum BoundStep: Sendable {
    case property(ObjectSchema, Property)
    case backlinks(source: ObjectSchema, via: Property)
    case allBacklinks
    case index(Int)
    case first, last, all
    case key(String)
    case keys
    /// A step into the nested collections of mixed values (`extra[0]`, `extra['k']`,
    /// `extra.k`, `extra[*]`, `extra.@keys`).
    case nested(NestedStep)
}

/// A step into a mixed value's nested collection: an element of a list by position, a value of
/// a dictionary by key, every element (or value), or a dictionary's keys.
package enum NestedStep: Sendable {
    case index(Int)
    case first, last
    case key(String)
    case all
    case keys
}

package enum BoundPostfix: Sendable {
    case none, count, type, length
    case aggregate(QueryAggregate, [BoundStep])
}

package struct BoundPath: Sendable {
    package var root: PathRoot
    package var steps: [BoundStep]
    package var postfix: BoundPostfix
    package var quantifier: QueryQuantifier?
    /// Whether a collection lies on the path (before a count or aggregate, which make one value).
    package var isMultiple: Bool
    /// The type of the values the path gives (after the postfix), nil when mixed or unknown.
    package var type: PropertyType?
    /// The property whose values the path reads last, if any.
    var lastProperty: Property?
    /// The path as written, for messages.
    package var text: String
    /// `.postfixType` for a path ending in `.@type` (only == and != apply).
    var kind: BoundPathKind = .plain
}

enum BoundPathKind: Sendable { case plain, postfixType }

extension BoundPath {
    /// What the path is when it ends in a list or set of objects or in backlinks (no postfix):
    /// "a list of Dog objects"; nil otherwise.
    var objectCollection: String? {
        guard case .none = postfix, let last = steps.last else { return nil }
        switch last {
        case .backlinks(let source, let via): return "backlinks from \(source.className).\(via.name)"
        case .property(_, let p) where p.collection == .list || p.collection == .set:
            guard let target = p.type.objectClassName else { return nil }
            return "a \(p.collection.rawValue) of \(target) objects"
        default: return nil
        }
    }

    /// The class and property when the path is one single-valued property of the tested object
    /// itself (not backlinks; no postfix, no quantifier): its value is one read of one column.
    package var ownProperty: (cls: ObjectSchema, property: Property)? {
        guard root == .object, steps.count == 1, quantifier == nil, case .none = postfix,
              case .property(let cls, let p) = steps[0], p.collection == .none, !p.isBacklinks else { return nil }
        return (cls, p)
    }
}

package enum BoundDescriptor {
    case sort([(BoundPath, ascending: Bool)])
    case distinct([BoundPath])
    case limit(Int)
    case offset(Int)
}

/// A query ready to run on objects of one class (or on the elements of a primitive collection).
package struct BoundQuery {
    package var predicate: BoundPredicate
    package var descriptors: [BoundDescriptor]

    package init(predicate: BoundPredicate, descriptors: [BoundDescriptor]) {
        self.predicate = predicate
        self.descriptors = descriptors
    }
}

package struct QueryBinder {
    let schema: Schema
    let store: ObjectStore
    /// The class whose objects are tested; nil for a collection of primitives.
    let cls: ObjectSchema?
    /// For a collection of primitives: the collection property (its element type).
    let elementProperty: Property?
    let arguments: [QueryArgument]
    let text: String
    /// The classes of the SUBQUERY variables in scope, innermost last.
    var variables: [(name: String, cls: ObjectSchema)] = []
    /// Whether binding looked an object up by primary key (the binding then holds for this
    /// version only: the object may come or go).
    package private(set) var lookedUpObjects = false

    package init(schema: Schema, store: ObjectStore, cls: ObjectSchema?, elementProperty: Property?,
                 arguments: [QueryArgument], text: String) {
        self.schema = schema
        self.store = store
        self.cls = cls
        self.elementProperty = elementProperty
        self.arguments = arguments
        self.text = text
    }

    package func error(_ message: String) -> CoveError {
        CoveError(.invalidArgument, "invalid query \"\(text)\": \(message)")
    }

    // MARK: Predicates

    package mutating func bind(_ query: ParsedQuery) throws(CoveError) -> BoundQuery {
        let predicate = try bind(query.predicate)
        var descriptors: [BoundDescriptor] = []
        for d in query.descriptors {
            switch d {
            case .sort(let keys):
                var bound: [(BoundPath, ascending: Bool)] = []
                for (path, ascending) in keys {
                    let p = try bindPath(path)
                    if p.isMultiple { throw error("cannot sort on '\(p.text)': it is a collection (sort by its @count)") }
                    bound.append((p, ascending))
                }
                descriptors.append(.sort(bound))
            case .distinct(let paths):
                var bound: [BoundPath] = []
                for path in paths {
                    let p = try bindPath(path)
                    if p.isMultiple { throw error("cannot apply DISTINCT on '\(p.text)': it is a collection") }
                    bound.append(p)
                }
                descriptors.append(.distinct(bound))
            case .limit(let n): descriptors.append(.limit(n))
            case .offset(let n): descriptors.append(.offset(n))
            }
        }
        return BoundQuery(predicate: predicate, descriptors: descriptors)
    }

    package mutating func bind(_ p: QueryPredicate) throws(CoveError) -> BoundPredicate {
        switch p {
        case .truePredicate: return .constant(true)
        case .falsePredicate: return .constant(false)
        case .and(let terms):
            var out: [BoundPredicate] = []
            out.reserveCapacity(terms.count)
            for t in terms { out.append(try bind(t)) }
            return .and(out)
        case .or(let terms):
            var out: [BoundPredicate] = []
            out.reserveCapacity(terms.count)
            for t in terms { out.append(try bind(t)) }
            return .or(out)
        case .not(let inner): return .not(try bind(inner))
        case .comparison(let c): return .compare(try bind(c))
        }
    }

    mutating func bind(_ c: QueryComparison) throws(CoveError) -> BoundComparison {
        let left = try bind(c.left)
        let right = try bind(c.right)
        if left.isConstant && right.isConstant {
            throw error("cannot compare two constants")
        }
        var comparison = BoundComparison(left: left, op: c.op, options: c.options, right: right)
        try check(comparison)
        if left.testsType || right.testsType {
            comparison.left = try typeSets(left)
            comparison.right = try typeSets(right)
            comparison.comparesTypes = true
            return comparison
        }
        if c.op == .in, c.options.isEmpty, case .list(let values, let quantifier) = right, quantifier == nil || quantifier == .any,
           !values.contains(where: { if case .link = $0 { return true } else { return false } }) {
            comparison.lookup = Set(values.map(QueryEvaluator.normalized))
        }
        return comparison
    }

    /// The semantic checks of one comparison.
    func check(_ c: BoundComparison) throws(CoveError) {
        let sides = [c.left, c.right]
        let pathTypes = sides.compactMap { e -> (BoundPath)? in if case .path(let p) = e { return p } else { return nil } }
        // Quantifiers need a collection.
        for p in pathTypes where p.quantifier != nil && !p.isMultiple {
            throw error("\(p.quantifier.map { "\($0)".uppercased() } ?? "ANY") on '\(p.text)' needs a collection on the path")
        }
        // Two collections: RQL compares a collection with a value or a list literal, never with
        // another collection.
        if !c.left.isConstant && !c.right.isConstant && c.left.isMultiple && c.right.isMultiple {
            throw error("cannot compare two collections, \(c.left.label) and \(c.right.label): compare an element (ANY, ALL, NONE), @count or an aggregate of each")
        }
        if c.left.testsType || c.right.testsType {
            try checkTypeComparison(c)
            return
        }
        // A list or set of objects, or backlinks, holds no nulls: comparing it with null is an
        // error, not a test that never holds.
        for (path, other) in [(c.left, c.right), (c.right, c.left)] {
            guard case .path(let p) = path, let kind = p.objectCollection, case .constant(let v) = other, v.isNull else { continue }
            throw error("cannot compare '\(p.text)' (\(kind)) with null: it holds no nulls (test '\(p.text).@count == 0' for an empty one)")
        }
        // String modifiers need strings.
        if !c.options.isEmpty {
            for p in pathTypes {
                if let t = p.type, t != .string, t != .data, t != .mixed {
                    throw error("[c]/[d] apply to strings, but '\(p.text)' is \(t.name)")
                }
            }
            switch c.op {
            case .equal, .notEqual, .in, .beginsWith, .endsWith, .contains, .like: break
            default: throw error("[c]/[d] do not apply to \(c.op.rawValue)")
            }
        }
        // Ordering on bools and links is an error (Cove's decision 3 for bools).
        switch c.op {
        case .less, .lessOrEqual, .greater, .greaterOrEqual, .between:
            for p in pathTypes {
                if p.type == .bool { throw error("'\(p.text)' is a bool: \(c.op.rawValue) does not order bools") }
                if let t = p.type, t.objectClassName != nil { throw error("'\(p.text)' is a link: only ==, != and IN compare links") }
            }
        default: break
        }
        // A string literal against a number (Cove's decision 3), and other type clashes.
        for (path, other) in [(c.left, c.right), (c.right, c.left)] {
            guard case .path(let p) = path, let t = p.type else { continue }
            var constants: [Value] = []
            switch other {
            case .constant(let v): constants = [v]
            case .list(let vs, _): constants = vs
            default: continue
            }
            for v in constants where !v.isNull {
                if !Self.comparable(t, v) {
                    throw error("cannot compare '\(p.text)' (\(t.name)) with \(v.typedDescription)")
                }
            }
        }
        if c.op == .between {
            guard case .list(let bounds, _) = c.right, bounds.count == 2 else {
                throw error("BETWEEN takes a list of exactly two values: {low, high}")
            }
        }
        if c.op == .text {
            guard case .path(let p) = c.left, let property = p.lastProperty, property.type == .string else {
                throw error("TEXT applies to a string property")
            }
            guard property.isFullText else {
                throw error("property '\(property.name)' has no full-text index (declare it in the class's \"fulltext\" list)")
            }
        }
        if c.op == .in, !c.right.isMultiple {
            throw error("IN needs a list, a list argument or a collection on its right")
        }
    }

    /// The checks of a comparison with `@type` on a side: == != IN only, no [c]/[d], and on
    /// the other side type names (string constants or arguments) or another `@type`.
    private func checkTypeComparison(_ c: BoundComparison) throws(CoveError) {
        switch c.op {
        case .equal, .notEqual, .in: break
        default: throw error("@type compares with ==, != and IN only, not \(c.op.rawValue)")
        }
        if !c.options.isEmpty { throw error("[c]/[d] do not apply to @type") }
        for (side, other) in [(c.left, c.right), (c.right, c.left)] where side.testsType {
            guard case .path(let p) = side else { continue }
            var names: [Value]
            switch other {
            case .constant(let v): names = [v]
            case .list(let vs, _): names = vs
            case .path(let q) where q.kind == .postfixType: names = []
            case .path(let q): throw error("'\(p.text)' compares with type names, not with '\(q.text)'")
            default: throw error("'\(p.text)' compares with type names such as 'int', 'string' or 'numeric'")
            }
            for v in names {
                guard case .string(let name) = v else {
                    throw error("'\(p.text)' compares with type names such as 'int', 'string' or 'numeric', got \(v.typedDescription)")
                }
                if QueryTypeAttribute.named(name) == nil {
                    throw error("'\(p.text)': unknown type name '\(name)' (known: \(QueryTypeAttribute.knownNames))")
                }
            }
        }
    }

    /// A side of a checked `@type` comparison with its type names as type sets.
    private func typeSets(_ e: BoundExpression) throws(CoveError) -> BoundExpression {
        func set(_ v: Value) throws(CoveError) -> Value {
            guard case .string(let name) = v, let types = QueryTypeAttribute.named(name) else {
                throw error("\(v.typedDescription) is not a type name")
            }
            return .int(types.rawValue)
        }
        switch e {
        case .constant(let v): return .constant(try set(v))
        case .list(let vs, let q):
            var sets: [Value] = []
            for v in vs { sets.append(try set(v)) }
            return .list(sets, q)
        default: return e
        }
    }

    /// Whether a constant may be compared with values of type `t`.
    static func comparable(_ t: PropertyType, _ v: Value) -> Bool {
        switch (t, v) {
        case (.mixed, _): return true
        case (.int, .int), (.int, .float), (.int, .double), (.int, .decimal128),
             (.float, .int), (.float, .float), (.float, .double), (.float, .decimal128),
             (.double, .int), (.double, .float), (.double, .double), (.double, .decimal128),
             (.decimal128, .int), (.decimal128, .float), (.decimal128, .double), (.decimal128, .decimal128):
            return true
        case (.string, .string), (.string, .data), (.data, .data), (.data, .string): return true
        case (.bool, .bool), (.date, .timestamp), (.objectId, .objectId), (.uuid, .uuid): return true
        case (.object, .link): return true
        default: return false
        }
    }

    // MARK: Expressions

    mutating func bind(_ e: QueryExpression) throws(CoveError) -> BoundExpression {
        switch e {
        case .constant(let c): return .constant(try value(c))
        case .argument(let n):
            guard n >= 0, n < arguments.count else {
                throw error("argument $\(n) is out of range: the query has \(arguments.count) arguments")
            }
            switch arguments[n] {
            case .value(let v): return .constant(v)
            case .list(let vs): return .list(vs, nil)
            }
        case .list(let items, let quantifier):
            var values: [Value] = []
            for item in items {
                switch try bind(item) {
                case .constant(let v): values.append(v)
                case .list(let vs, _): values.append(contentsOf: vs)
                default: throw error("a list literal holds constants and arguments only")
                }
            }
            return .list(values, quantifier)
        case .keyPath(let path):
            return .path(try bindPath(path))
        case .subquery(let path, let variable, let predicate):
            let collection = try bindPath(path)
            guard collection.isMultiple, case .object(let name)? = collection.type, let target = schema[name] else {
                throw error("SUBQUERY needs a to-many link or backlinks, but '\(collection.text)' is not one")
            }
            if variables.contains(where: { $0.name == variable }) {
                throw error("SUBQUERY variable \(variable) is already in use")
            }
            variables.append((variable, target))
            let bound = try bind(predicate)
            variables.removeLast()
            return .subquery(collection, variable: variables.count, bound)
        case .arithmetic(let op, let a, let b):
            let x = try bind(a), y = try bind(b)
            if case .constant(let u) = x, case .constant(let v) = y {
                return .constant(QueryEvaluator.arithmetic(op, u, v) ?? .null)
            }
            for side in [x, y] {
                if case .path(let p) = side, let t = p.type, ![.int, .double, .float, .decimal128, .mixed].contains(t) {
                    throw error("arithmetic needs numbers, but '\(p.text)' is \(t.name)")
                }
            }
            return .arithmetic(op, x, y)
        }
    }

    mutating func value(_ c: QueryConstant) throws(CoveError) -> Value {
        switch c {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(i)
        case .double(let d): return .double(d)
        case .float(let f): return .float(f)
        case .string(let s): return .string(s)
        case .binary(let b): return .data(b)
        case .timestamp(let t): return .timestamp(t)
        case .objectId(let o): return .objectId(o)
        case .uuid(let u):
            guard u.bytes.count == 16 else { throw error("a UUID has 16 bytes") }
            let b = u.bytes
            return .uuid(UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])))
        case .objectByPrimaryKey(let className, let pk):
            guard let target = schema[className] else { throw error("no class '\(className)' in the schema") }
            guard let classKey = target.classKey else { throw error("class '\(className)' has no key") }
            lookedUpObjects = true
            let key = try store.find(target, primaryKey: try value(pk.value))
            return .link(ObjectLink(classKey: classKey, objectKey: key ?? -1))
        case .objectKey(let n): return .link(ObjectLink(classKey: QueryEvaluator.anyClass, objectKey: n))
        case .link(let classKey, let objectKey): return .link(ObjectLink(classKey: classKey, objectKey: objectKey))
        }
    }

    // MARK: Key paths

    /// A path that starts at the object itself with a step (`@links...`): bound as if its
    /// first step followed a name that names the object.
    private func bindSteps(_ path: QueryKeyPath, from cls: ObjectSchema) throws(CoveError) -> BoundPath {
        var inner = QueryBinder(schema: schema, store: store, cls: nil, elementProperty: nil, arguments: arguments, text: text)
        inner.variables = variables + [(name: "$__self", cls: cls)]
        var p = path
        p.head = "$__self"
        p.isVariable = true
        var bound = try inner.bindPath(p)
        bound.root = .object
        bound.text = String(bound.text.dropFirst("$__self.".count))
        return bound
    }

    package func bindPath(_ path: QueryKeyPath) throws(CoveError) -> BoundPath {
        var steps: [BoundStep] = []
        var text = path.head
        var current: ObjectSchema?
        var multiple = false
        var type: PropertyType?
        var last: Property?
        var root = PathRoot.object
        var head = path.head
        if head.hasPrefix("$K"), let n = Int(head.dropFirst(2)) {
            guard n < arguments.count, case .value(.string(let spliced)) = arguments[n] else {
                throw error("argument $K\(n) must be a string (a key path)")
            }
            head = spliced
            text = String(spliced.split(separator: ".").first ?? "")
        }
        // A spliced key path may hold dots: its components are plain names. An empty head
        // (`@links.Class.prop`) starts at the object itself.
        var pending = head.split(separator: ".").map { QueryPathStep.property(String($0)) }
        if pending.isEmpty {
            guard !path.isVariable, let cls, !path.steps.isEmpty else { throw error("an empty key path") }
            var bound = try bindSteps(path, from: cls)
            bound.quantifier = path.quantifier
            return bound
        }
        let first = pending.removeFirst()
        guard case .property(let firstName) = first else { throw error("a key path starts with a name") }

        if path.isVariable {
            guard let index = variables.lastIndex(where: { $0.name == firstName }) else {
                throw error("unknown SUBQUERY variable \(firstName)")
            }
            root = .variable(index)
            current = variables[index].cls
            type = .object(variables[index].cls.className)
        } else if firstName == "self" && cls == nil {
            guard let element = elementProperty else { throw error("'self' names the elements of a collection of values") }
            root = .element
            type = element.type
            last = element
        } else {
            guard let cls else { throw error("a collection of values is queried through 'self', not '\(firstName)'") }
            current = cls
            pending.insert(.property(firstName), at: 0)
        }
        pending.append(contentsOf: path.steps)

        func propertyStep(_ name: String) throws(CoveError) {
            guard let from = current else {
                throw error("'\(text)': \(type?.name ?? "a value") has no property '\(name)'")
            }
            guard let p = from[property: name] else {
                throw error("class '\(from.className)' has no property '\(name)'")
            }
            if case .linkingObjects(let sourceName, let sourceProperty) = p.type {
                guard let source = schema[sourceName], let via = source[property: sourceProperty] else {
                    throw error("backlinks '\(name)' of class '\(from.className)' name a missing property")
                }
                steps.append(.backlinks(source: source, via: via))
                multiple = true
                current = source
                type = .object(sourceName)
                last = nil
                return
            }
            steps.append(.property(from, p))
            last = p
            type = p.type
            if p.collection != .none { multiple = true }
            intoMixed = p.type == .mixed && p.collection == .none
            if let target = p.type.objectClassName { current = schema[target] } else { current = nil }
        }

        // Whether the values reached so far are single mixed values, which the next step may
        // look into (their nested lists and dictionaries).
        var intoMixed = false
        func nestedStep(_ step: QueryPathStep) throws(CoveError) -> NestedStep? {
            switch step {
            case .index(let n): text += "[\(n)]"; return .index(n)
            case .first: text += "[FIRST]"; return .first
            case .last: text += "[LAST]"; return .last
            case .all: text += "[*]"; return .all
            case .key(let k): text += "['\(k)']"; return .key(k)
            case .keys: text += ".@keys"; return .keys
            case .property(let name) where !name.hasPrefix("@"): text += "." + name; return .key(name)
            case .argumentKey(let n):
                guard n < arguments.count, case .value(let v) = arguments[n] else { throw error("argument $\(n) is out of range") }
                text += "[$\(n)]"
                switch v {
                case .string(let k): return .key(k)
                case .int(let k): return .index(Int(k))
                default: throw error("'\(text)': argument $\(n) must be a string key or an int index")
                }
            default: return nil
            }
        }

        var i = 0
        while i < pending.count {
            let step = pending[i]
            if intoMixed, let nested = try nestedStep(step) {
                steps.append(.nested(nested))
                switch nested {
                case .all: multiple = true
                case .keys: multiple = true; type = .string; intoMixed = false
                default: break
                }
                last = nil
                i += 1
                continue
            }
            let wasMixedCollection = last.map { $0.type == .mixed && $0.collection != .none } ?? false
            intoMixed = false
            switch step {
            case .property(let name):
                if i > 0 || root != .object { text += "." + name }
                if let previous = last, previous.collection == .map, current == nil || previous.type.objectClassName == nil, !name.hasPrefix("@") {
                    // `dict.key`
                    steps.append(.key(name))
                    last = nil
                } else {
                    try propertyStep(name)
                }
            case .backlinks(let className, let property):
                text += ".@links.\(className).\(property)"
                guard let source = schema[className], let via = source[property: property], via.type.objectClassName == (current?.className ?? "") else {
                    throw error("no link property '\(className).\(property)' points at '\(current?.className ?? text)'")
                }
                steps.append(.backlinks(source: source, via: via))
                multiple = true
                current = source
                type = .object(className)
                last = nil
            case .allBacklinks:
                text += ".@links"
                steps.append(.allBacklinks)
                multiple = true
                current = nil
                type = nil
            case .index(let n):
                text += "[\(n)]"
                guard let p = last, p.collection == .list else { throw error("'\(text)': [\(n)] indexes lists only") }
                steps.append(.index(n))
                multiple = false
            case .first, .last:
                text += step == .first ? "[FIRST]" : "[LAST]"
                guard let p = last, p.collection == .list else { throw error("'\(text)': FIRST and LAST index lists only") }
                steps.append(step == .first ? .first : .last)
                multiple = false
            case .all:
                text += "[*]"
                steps.append(.all)
                multiple = true
            case .key(let k):
                text += "['\(k)']"
                guard let p = last, p.collection == .map else { throw error("'\(text)': a key subscript needs a dictionary") }
                steps.append(.key(k))
            case .argumentKey(let n):
                guard n < arguments.count, case .value(let v) = arguments[n] else { throw error("argument $\(n) is out of range") }
                text += "[$\(n)]"
                if case .string(let k) = v, let p = last, p.collection == .map {
                    steps.append(.key(k))
                } else if case .int(let k) = v, let p = last, p.collection == .list {
                    steps.append(.index(Int(k)))
                    multiple = false
                } else {
                    throw error("'\(text)': argument $\(n) does not subscript this collection")
                }
            case .keys:
                text += ".@keys"
                guard let p = last, p.collection == .map else { throw error("'\(text)': @keys needs a dictionary") }
                steps.append(.keys)
                type = .string
                multiple = true
            }
            // An element of a list or map of mixed values (by subscript, or all of them) is a
            // mixed value the next step may look into.
            if wasMixedCollection, type == .mixed {
                switch step {
                case .index, .first, .last, .all, .key, .argumentKey: intoMixed = true
                case .property: intoMixed = steps.last.map { if case .key = $0 { return true } else { return false } } ?? false
                default: break
                }
            }
            i += 1
        }

        var postfix = BoundPostfix.none
        var kind = BoundPathKind.plain
        switch path.postfix {
        case .none: break
        case .count:
            text += ".@count"
            let onString = (type == .string || type == .data || type == .mixed) && !multiple
            guard multiple || onString else { throw error("@count/@size need a collection or a string, but '\(text)' is one value") }
            postfix = .count
            type = .int
            multiple = false
        case .type:
            guard type == .mixed else {
                throw error("@type applies to mixed values, but '\(text)' is \(type.map { $0.objectClassName != nil ? "a link to \($0.name)" : $0.name } ?? "not a value")")
            }
            text += ".@type"
            postfix = .type
            kind = .postfixType
            type = .string
        case .length:
            text += ".length"
            guard type == .string || type == .data else { throw error("'\(text)': length applies to strings and binaries") }
            postfix = .length
            type = .int
        case .aggregate(let aggregate, let property):
            text += "." + aggregate.rawValue
            guard multiple else { throw error("'\(text)' needs a collection") }
            var inner: [BoundStep] = []
            var valueType = type
            if !property.isEmpty {
                guard let target = current else { throw error("'\(text)': the elements are not objects") }
                var cursor: ObjectSchema? = target
                for s in property {
                    guard case .property(let name) = s, let c = cursor, let p = c[property: name], p.collection == .none, !p.isBacklinks else {
                        throw error("'\(text)': the property after \(aggregate.rawValue) must be a plain property")
                    }
                    text += "." + name
                    inner.append(.property(c, p))
                    valueType = p.type
                    cursor = p.type.objectClassName.flatMap { schema[$0] }
                }
            }
            if property.isEmpty, let target = valueType?.objectClassName {
                throw error("\(aggregate.rawValue) over '\(text.dropLast(aggregate.rawValue.count + 1))' needs a property of the \(target) objects after it ('\(text).property')")
            }
            let numeric: Set<PropertyType> = [.int, .float, .double, .decimal128, .mixed]
            let ordered = numeric.union([.date])
            switch aggregate {
            case .min, .max:
                guard let t = valueType, ordered.contains(t) else { throw error("\(aggregate.rawValue) needs numbers or dates, but '\(text)' is \(valueType?.name ?? "objects")") }
            case .sum, .avg:
                guard let t = valueType, numeric.contains(t) else { throw error("\(aggregate.rawValue) needs numbers, but '\(text)' is \(valueType?.name ?? "objects")") }
            }
            postfix = .aggregate(aggregate, inner)
            type = aggregate == .avg && valueType != .decimal128 ? .double : valueType
            multiple = false
        }
        return BoundPath(root: root, steps: steps, postfix: postfix, quantifier: path.quantifier, isMultiple: multiple,
                         type: type, lastProperty: last, text: text, kind: kind)
    }
}
