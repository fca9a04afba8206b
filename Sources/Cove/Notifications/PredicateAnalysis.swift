// What the change sets of collections need to know about a query's predicate: whether it is
// local (reads only the tested object's own properties) and which properties it reads, bound
// once and cached per schema.
import CoveCore
import Synchronization

/// A differ's query predicate bound once, when it is local (it reads only the tested object's
/// own properties), with the keys of the properties it reads; every change set of the
/// incremental path would otherwise bind the query again. The entry holds for the schema it
/// was bound against. A binding that looked an object up by primary key is not kept: that
/// object may be created or deleted later.
final class LocalPredicateCache: @unchecked Sendable {
    private struct Entry {
        var schema: Schema
        var predicate: BoundPredicate?
        var reads: Set<Int64>?
    }

    private let entry = Mutex<Entry?>(nil)

    /// The bound predicate of `parsed` on `cls` and the keys of the properties it reads (nil
    /// when one has no key); nil when it is not local.
    func bound(_ parsed: ParsedQuery, _ arguments: [QueryArgument], _ text: String, _ cls: ObjectSchema,
               _ store: ObjectStore) throws(CoveError) -> (predicate: BoundPredicate, reads: Set<Int64>?)? {
        if let e = entry.withLock({ $0 }), e.schema == store.schema {
            return e.predicate.map { ($0, e.reads) }
        }
        var binder = QueryBinder(schema: store.schema, store: store, cls: cls, elementProperty: nil, arguments: arguments, text: text)
        let predicate = try binder.bind(parsed.predicate)
        let local = predicate.isLocal ? predicate : nil
        let reads = local?.readPropertyKeys
        if !binder.lookedUpObjects {
            let e = Entry(schema: store.schema, predicate: local, reads: reads)
            entry.withLock { $0 = e }
        }
        return local.map { ($0, reads) }
    }
}

extension BoundPredicate {
    /// Whether the predicate reads only the tested object's own single-valued properties (no
    /// links, collections, backlinks, subqueries or variables), so that whether an object
    /// matches can change only when that object is written.
    var isLocal: Bool {
        switch self {
        case .constant: return true
        case .and(let terms), .or(let terms): return terms.allSatisfy(\.isLocal)
        case .not(let inner): return inner.isLocal
        case .compare(let c): return c.left.isLocal && c.right.isLocal
        }
    }
}

extension BoundPredicate {
    /// The keys of the tested object's properties a local predicate reads; nil when one of
    /// them has no key (then any write may matter).
    var readPropertyKeys: Set<Int64>? {
        var keys = Set<Int64>()
        return collectReads(into: &keys) ? keys : nil
    }

    private func collectReads(into keys: inout Set<Int64>) -> Bool {
        switch self {
        case .constant: return true
        case .and(let terms), .or(let terms): return terms.allSatisfy { $0.collectReads(into: &keys) }
        case .not(let inner): return inner.collectReads(into: &keys)
        case .compare(let c): return c.left.collectReads(into: &keys) && c.right.collectReads(into: &keys)
        }
    }
}

extension BoundExpression {
    /// Adds the keys of the properties of the tested object this expression reads; false when
    /// one has no key.
    fileprivate func collectReads(into keys: inout Set<Int64>) -> Bool {
        switch self {
        case .constant, .list: return true
        case .arithmetic(_, let a, let b): return a.collectReads(into: &keys) && b.collectReads(into: &keys)
        case .subquery: return false
        case .path(let p):
            for step in p.steps {
                guard case .property(_, let property) = step else { continue }
                guard let key = property.key else { return false }
                keys.insert(key)
            }
            return true
        }
    }

    var isLocal: Bool {
        switch self {
        case .constant, .list: return true
        case .subquery: return false
        case .arithmetic(_, let a, let b): return a.isLocal && b.isLocal
        case .path(let p):
            guard p.root == .object, p.steps.count <= 1 else { return false }
            if case .aggregate = p.postfix { return false }
            if case .count = p.postfix, p.isMultiple { return true }
            if let step = p.steps.first, case .property(_, let property) = step { return !property.isBacklinks }
            return p.steps.isEmpty
        }
    }
}
