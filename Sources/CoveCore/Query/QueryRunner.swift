// QueryRunner: the rows of a query over a class's objects or over rows already read (a list's or
// a set's elements, the objects linking to one), after its stages (queries, sorts, DISTINCT),
// with the plan it followed. For the first query over a table it chooses how to read: an index
// that narrows or answers it, the packed columns (keeping the first few of a sort and limit),
// or a scan; then filters, sorts and limits in order.

/// One stage of a results' chain: a query (parsed, its arguments, its text), a sort, a
/// DISTINCT.
package enum QueryStage {
    case query(ParsedQuery, [QueryArgument], String)
    case sort([QueryPlan.SortKey])
    case distinct([String])
}

/// Where a query's rows come from.
package enum QuerySource {
    /// The objects of the runner's class, read as the first stage makes cheapest.
    case table
    /// Rows already read (links for objects, values for values), with the step that read them.
    case rows([Value], QueryPlan.Step)
}

/// Runs stages over a source in one transaction's store.
package struct QueryRunner {
    package let store: ObjectStore
    /// The class of the objects; nil for values.
    package let cls: ObjectSchema?
    /// For values: the collection property they belong to.
    package let elementProperty: Property?
    /// What the results are, for messages ("Person filter(age > 3)").
    package let summary: String

    package init(store: ObjectStore, cls: ObjectSchema?, elementProperty: Property?, summary: String) {
        self.store = store
        self.cls = cls
        self.elementProperty = elementProperty
        self.summary = summary
    }

    /// The rows of `source` after `stages`, and the plan that produced them.
    package func run(_ source: QuerySource, _ stages: [QueryStage]) throws(CoveError) -> ([Value], QueryPlan) {
        var stageIndex = 0
        var current: [Value]
        var plan = QueryPlan()
        /// Set when the first query's predicate was applied while reading the table.
        var firstFiltered: BoundQuery?
        switch source {
        case .table:
            guard let cls else { throw CoveError(.internal, "a table without a class") }
            let classKey = try store.classKey(of: cls)
            // An index may narrow the first query's candidates (and answer it whole); a
            // predicate of plain properties runs over the packed columns.
            var first: BoundQuery?
            if case .query(let parsed, let args, let text)? = stages.first {
                var binder = QueryBinder(schema: store.schema, store: store, cls: cls, elementProperty: nil, arguments: args, text: text)
                first = try binder.bind(parsed)
            }
            if let first, let (candidates, exact) = try indexCandidates(first.predicate, cls, store, &plan) {
                current = candidates.map { .link(ObjectLink(classKey: classKey, objectKey: $0)) }
                if exact { firstFiltered = first }
            } else if let first, let (keys, rest) = try columnScanTop(first, cls, store, &plan) {
                current = keys.map { .link(ObjectLink(classKey: classKey, objectKey: $0)) }
                firstFiltered = BoundQuery(predicate: first.predicate, descriptors: rest)
            } else if let first, let keys = try store.columnScan(cls, first.predicate) {
                current = keys.map { .link(ObjectLink(classKey: classKey, objectKey: $0)) }
                plan.append(.columnScan(className: cls.className, objects: try store.count(cls)))
                firstFiltered = first
            } else {
                current = try store.objectKeys(cls).map { .link(ObjectLink(classKey: classKey, objectKey: $0)) }
                plan.append(.scan(className: cls.className, objects: current.count))
            }
        case .rows(let rows, let step):
            current = rows
            plan.append(step)
        }
        if let firstFiltered {
            current = try applyAll(firstFiltered.descriptors, current, store, &plan)
            stageIndex = 1
        }
        while stageIndex < stages.count {
            switch stages[stageIndex] {
            case .query(let parsed, let args, let text):
                var binder = QueryBinder(schema: store.schema, store: store, cls: cls, elementProperty: elementProperty, arguments: args, text: text)
                let bound = try binder.bind(parsed)
                var evaluator = QueryEvaluator(store: store)
                if case .constant(true) = bound.predicate {} else {
                    var kept: [Value] = []
                    for row in current where try evaluator.matches(bound.predicate, row) { kept.append(row) }
                    current = kept
                    plan.append(.filter(text))
                }
                current = try applyAll(bound.descriptors, current, store, &plan)
            case .sort(let keys):
                let binder = QueryBinder(schema: store.schema, store: store, cls: cls, elementProperty: elementProperty, arguments: [], text: summary)
                var bound: [(BoundPath, ascending: Bool)] = []
                for key in keys {
                    let path = try binder.bindPath(QueryKeyPath(head: key.keyPath, steps: []))
                    if path.isMultiple { throw binder.error("cannot sort on '\(key.keyPath)': it is a collection") }
                    bound.append((path, key.ascending))
                }
                current = try apply(.sort(bound), current, store, &plan)
            case .distinct(let keys):
                let binder = QueryBinder(schema: store.schema, store: store, cls: cls, elementProperty: elementProperty, arguments: [], text: summary)
                var bound: [BoundPath] = []
                for key in keys {
                    let path = try binder.bindPath(QueryKeyPath(head: key, steps: []))
                    if path.isMultiple { throw binder.error("cannot apply distinct on '\(key)': it is a collection") }
                    bound.append(path)
                }
                current = try apply(.distinct(bound), current, store, &plan)
            }
            stageIndex += 1
        }
        return (current, plan)
    }

    /// The number of matches of a table filtered by one query (no SORT, DISTINCT or LIMIT in
    /// it) that an index narrows or answers whole, or that runs over the columns, counted
    /// without collecting the matches; nil when the count needs the rows.
    package func fastCount(_ stages: [QueryStage]) throws(CoveError) -> Int? {
        guard stages.count == 1, case .query(let parsed, let args, let text) = stages[0], let cls else { return nil }
        var binder = QueryBinder(schema: store.schema, store: store, cls: cls, elementProperty: nil, arguments: args, text: text)
        let bound = try binder.bind(parsed)
        guard bound.descriptors.isEmpty else { return nil }
        var plan = QueryPlan()
        if let (candidates, exact) = try indexCandidates(bound.predicate, cls, store, &plan) {
            if exact { return candidates.count }
            // The index narrowed the candidates: the query decides each of them.
            let classKey = try store.classKey(of: cls)
            var evaluator = QueryEvaluator(store: store)
            var n = 0
            for k in candidates where try evaluator.matches(bound.predicate, .link(ObjectLink(classKey: classKey, objectKey: k))) {
                n += 1
            }
            return n
        }
        return try store.columnCount(cls, bound.predicate)
    }

    /// The first query's matches when it sorts by one string property and then limits, and
    /// its predicate runs over the packed columns: the first few are kept while the table is
    /// scanned. Returns their keys and the descriptors still to apply; nil otherwise.
    private func columnScanTop(_ first: BoundQuery, _ cls: ObjectSchema, _ store: ObjectStore,
                               _ plan: inout QueryPlan) throws(CoveError) -> ([Int64], [BoundDescriptor])? {
        guard first.descriptors.count >= 2, case .sort(let keys) = first.descriptors[0], keys.count == 1,
              case .limit(let n) = first.descriptors[1] else { return nil }
        let count = try store.count(cls)
        guard Self.keepsFirstFew(n, of: Int(count)),
              let top = try store.columnScanTopStrings(cls, first.predicate, keys[0].0, ascending: keys[0].ascending, limit: n) else {
            return nil
        }
        plan.append(.columnScanTop(className: cls.className, objects: count, limit: n, key: keys[0].0.text, ascending: keys[0].ascending))
        plan.append(.limit(n))
        return (top, Array(first.descriptors.dropFirst(2)))
    }

    /// Whether a SORT then LIMIT(`limit`) over `count` rows keeps the first few in a bounded
    /// buffer rather than sorting them all: a buffer near the size of the rows costs more.
    private static func keepsFirstFew(_ limit: Int, of count: Int) -> Bool { limit < count / 4 }

    /// Applies descriptors in order; a SORT directly followed by LIMIT keeps only what the
    /// limit takes while it sorts.
    private func applyAll(_ descriptors: [BoundDescriptor], _ rows: [Value], _ store: ObjectStore,
                          _ plan: inout QueryPlan) throws(CoveError) -> [Value] {
        var current = rows
        var i = 0
        while i < descriptors.count {
            if case .sort(let keys) = descriptors[i], i + 1 < descriptors.count, case .limit(let n) = descriptors[i + 1] {
                current = try sort(current, keys, limit: n, store, &plan)
                plan.append(.limit(n))
                i += 2
                continue
            }
            current = try apply(descriptors[i], current, store, &plan)
            i += 1
        }
        return current
    }

    private func apply(_ d: BoundDescriptor, _ rows: [Value], _ store: ObjectStore, _ plan: inout QueryPlan) throws(CoveError) -> [Value] {
        var evaluator = QueryEvaluator(store: store)
        switch d {
        case .limit(let n):
            plan.append(.limit(n))
            return Array(rows.prefix(n))
        case .offset(let n):
            plan.append(.offset(n))
            return Array(rows.dropFirst(n))
        case .sort(let keys):
            return try sort(rows, keys, limit: nil, store, &plan)
        case .distinct(let paths):
            plan.append(.distinct(keyPaths: paths.map(\.text)))
            var seen = Set<[Value]>()
            var out: [Value] = []
            // Rows whose path crosses a null link are dropped, as docs/query-language.md says.
            let prefixes = paths.map { path -> BoundPath? in
                guard path.steps.count > 1 else { return nil }
                var prefix = path
                prefix.steps.removeLast()
                prefix.postfix = .none
                return prefix
            }
            rows: for row in rows {
                var values: [Value] = []
                for (k, path) in paths.enumerated() {
                    if let prefix = prefixes[k], (try evaluator.pathValues(prefix, row).first ?? .null).isNull { continue rows }
                    values.append(QueryEvaluator.normalized(try evaluator.pathValues(path, row).first ?? .null))
                }
                if seen.insert(values).inserted { out.append(row) }
            }
            return out
        }
    }

    /// Rows sorted stably by `keys` (the first one primary); with `limit`, only the first
    /// `limit` of them, kept in a bounded sorted buffer instead of sorting everything.
    private func sort(_ rows: [Value], _ keys: [(BoundPath, ascending: Bool)], limit: Int?, _ store: ObjectStore,
                      _ plan: inout QueryPlan) throws(CoveError) -> [Value] {
        plan.append(.sort(keys: keys.map { QueryPlan.SortKey(keyPath: $0.0.text, ascending: $0.ascending) }, keepingFirst: limit))
        // The first few by one string property: one pass over the column's bytes in place.
        if keys.count == 1, let limit, Self.keepsFirstFew(limit, of: rows.count),
           let top = try store.topStrings(keys[0].0, rows, ascending: keys[0].ascending, limit: limit) {
            return top.map { rows[$0] }
        }
        // The keys' values, a column at a time where a key is a plain property of the objects.
        // A row whose path crosses a null link sorts after every value (last ascending, first
        // descending), as docs/query-language.md says.
        var columns: [[Value]] = []
        var crossed: [[Bool]] = []
        var evaluator = QueryEvaluator(store: store)
        for (path, _) in keys {
            if let values = try store.columnValues(path, rows) {
                columns.append(values)
                crossed.append([])
                continue
            }
            var values: [Value] = []
            var nullHop: [Bool] = []
            values.reserveCapacity(rows.count)
            var prefix = path
            prefix.steps.removeLast(prefix.steps.isEmpty ? 0 : 1)
            prefix.postfix = .none
            let hops = path.steps.count > 1
            for row in rows {
                values.append(try evaluator.pathValues(path, row).first ?? .null)
                if hops { nullHop.append((try evaluator.pathValues(prefix, row).first ?? .null).isNull) }
            }
            columns.append(values)
            crossed.append(nullHop)
        }
        func before(_ a: Int, _ b: Int) -> Bool {
            for (k, key) in keys.enumerated() {
                var c: Int
                let x = crossed[k].isEmpty ? false : crossed[k][a], y = crossed[k].isEmpty ? false : crossed[k][b]
                if x != y { c = x ? 1 : -1 } else { c = QueryEvaluator.sortOrder(columns[k][a], columns[k][b]) }
                if c != 0 { return key.ascending ? c < 0 : c > 0 }
            }
            return a < b
        }
        var order: [Int]
        if let limit, limit < rows.count / 4 {
            // The best `limit` rows so far, sorted; a row that does not beat the last is skipped
            // after one comparison.
            order = []
            order.reserveCapacity(limit + 1)
            for i in rows.indices {
                if order.count == limit, let last = order.last, !before(i, last) { continue }
                var lo = 0, hi = order.count
                while lo < hi {
                    let mid = (lo + hi) / 2
                    if before(order[mid], i) { lo = mid + 1 } else { hi = mid }
                }
                order.insert(i, at: lo)
                if order.count > limit { order.removeLast() }
            }
        } else {
            order = Array(rows.indices)
            order.sort(by: before)
            if let limit { order = Array(order.prefix(limit)) }
        }
        return order.map { rows[$0] }
    }

    /// The object keys an index gives for the query's first condition, when it is an equality
    /// or IN on an indexed property or the primary key (alone, or one term of a top-level AND);
    /// nil when no index applies. `exact` says the keys are the whole answer (the condition is
    /// the whole predicate, and the index compares as the query does), so the predicate need
    /// not run on them again.
    private func indexCandidates(_ bound: BoundPredicate, _ cls: ObjectSchema, _ store: ObjectStore,
                                 _ plan: inout QueryPlan) throws(CoveError) -> (keys: [Int64], exact: Bool)? {
        var terms: [BoundPredicate] = [bound]
        if case .and(let all) = bound { terms = all }
        for term in terms {
            guard case .compare(let c) = term, c.options.isEmpty else { continue }
            guard case .path(let path) = c.left, path.root == .object, path.quantifier == nil, path.steps.count == 1,
                  case .property(_, let p) = path.steps[0], case .none = path.postfix,
                  p.collection == .none, p.isIndexed else { continue }
            var wanted: [Value] = []
            switch (c.op, c.right) {
            case (.equal, .constant(let v)): wanted = [v]
            case (.in, .list(let vs, let q)) where q == nil || q == .any: wanted = vs
            case (.equal, .list(let vs, let q)) where q == nil || q == .any: wanted = vs
            default: continue
            }
            var keys = Set<Int64>()
            var looked = 0
            // One value: the index gives its objects in key order already.
            if wanted.count == 1, !p.isPrimaryKey,
               let normalized = try? PropertyCodec.value(try PropertyCodec.cell(QueryEvaluator.normalized(wanted[0]), for: p, of: cls), for: p, targetClassKey: 0) {
                let found = try store.indexLookup(cls, p, normalized)
                plan.append(.index(primaryKey: false, className: cls.className, property: p.name, lookups: 1, candidates: found.count))
                return (found, terms.count == 1 && p.type != .mixed)
            }
            for v in wanted {
                // Only values the property can hold can match; others are skipped, not errors.
                guard let normalized = try? PropertyCodec.value(try PropertyCodec.cell(QueryEvaluator.normalized(v), for: p, of: cls), for: p, targetClassKey: 0) else { continue }
                looked += 1
                if p.isPrimaryKey {
                    if let k = try store.find(cls, primaryKey: normalized) { keys.insert(k) }
                } else {
                    keys.formUnion(try store.indexLookup(cls, p, normalized))
                }
            }
            plan.append(.index(primaryKey: p.isPrimaryKey, className: cls.className, property: p.name, lookups: looked, candidates: keys.count))
            // Mixed values compare across numeric types, which their index keys do not.
            return (keys.sorted(), terms.count == 1 && p.type != .mixed)
        }
        return nil
    }
}
