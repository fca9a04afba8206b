// Creating objects: create plans made once for a set of property names, values checked and
// converted, the new row filed under its object key and primary key.
import CoveStorage
import Glibc
import Synchronization

extension ObjectStore {
    package func requireWrite() throws(CoveError) {
        if isFrozen { throw CoveError(.frozen, "a frozen realm cannot be written") }
        if !pages.isWritable { throw CoveError(.notInWrite, "cannot write outside a write transaction") }
        editCount &+= 1
    }

    /// Creates an object with its primary key and the values of `values` (property names with
    /// their values; one naming the primary key is skipped: the key is `primaryKey`). Plain
    /// single values and links go into the one row insert; the links' backlinks follow it.
    /// Everything is checked before the object exists, so a bad value leaves nothing half made.
    package func create(_ cls: ObjectSchema, primaryKey: Value?, values: [(String, Value)] = []) throws(CoveError) -> Int64 {
        try create(cls, primaryKey: primaryKey) { (t, row, links) throws(CoveError) in
            for (name, v) in values { try fill(t, at: try t.position(ofProperty: name), v, &row, &links) }
        }
    }

    /// Property names resolved once against a class, for creating many objects of it from
    /// values given by position (`create(_:_:)`): what a prepared statement is to SQL.
    package final class CreatePlan {
        package let cls: ObjectSchema
        /// The position in `cls.properties` of each name.
        let positions: [Int]
        /// Which value is the primary key's, when the class has one.
        package let primaryKeyValue: Int?
        /// Whether every name but the primary key is a plain single value (neither link nor
        /// mixed), so that values of exactly their columns' types go straight into the row.
        let allPlain: Bool

        init(cls: ObjectSchema, positions: [Int], primaryKeyValue: Int?) {
            self.cls = cls
            self.positions = positions
            self.primaryKeyValue = primaryKeyValue
            allPlain = positions.allSatisfy { i in
                let p = cls.properties[i]
                return p.isPrimaryKey || (!p.isLink && p.type != .mixed)
            }
        }

        /// Refuses `values` unless there is one for each name.
        func requireValues(for values: [Value]) throws(CoveError) {
            guard values.count == positions.count else {
                throw CoveError(.invalidArgument, "\(values.count) values for \(positions.count) properties of class '\(cls.className)'")
            }
        }
    }

    /// Resolves `names` for `create(_:_:)`: each must be a single-value property of `cls`, named
    /// once, the primary key among them when the class has one.
    /// - Throws: `.notFound` (a property), `.invalidArgument` (an embedded class, a backlinks
    ///   property, a name given twice, the primary key missing), `.wrongType` (a collection).
    package func createPlan(_ cls: ObjectSchema, properties names: [String]) throws(CoveError) -> CreatePlan {
        try Self.requireCreatable(cls)
        var positions: [Int] = []
        positions.reserveCapacity(names.count)
        var primaryKeyValue: Int?
        for (j, name) in names.enumerated() {
            guard let i = cls.index(ofProperty: name) else { throw Self.noProperty(name, in: cls) }
            let p = cls.properties[i]
            try Self.requireSingleValue(p, of: cls)
            if let k = positions.firstIndex(of: i) {
                throw CoveError(.invalidArgument, "property '\(name)' is named twice (names \(k) and \(j) of class '\(cls.className)')")
            }
            if p.isPrimaryKey { primaryKeyValue = j }
            positions.append(i)
        }
        if let pk = cls.primaryKey, primaryKeyValue == nil {
            throw CoveError(.invalidArgument, "class '\(cls.className)' has primary key '\(pk)': the property names must include it")
        }
        return CreatePlan(cls: cls, positions: positions, primaryKeyValue: primaryKeyValue)
    }

    /// Creates an object of `plan`'s class from `values`, one for each of its names in order,
    /// as `create(_:primaryKey:values:)` does.
    /// - Throws: as that, and `.invalidArgument` for a wrong number of values.
    package func create(_ plan: CreatePlan, _ values: [Value]) throws(CoveError) -> Int64 {
        try create(plan, values, collections: [], prepared: [])
    }

    /// `create(_:_:)`, the object's collections `collections` filled with their prepared
    /// elements: a small one in a row of its own goes into the new row itself, any other is
    /// assigned once the object exists.
    package func create(_ plan: CreatePlan, _ values: [Value], collections: [Property], prepared: [PreparedCollection]) throws(CoveError) -> Int64 {
        try plan.requireValues(for: values)
        var inRow: [(column: Int, cell: CellValue)] = []
        var later: [Int] = []
        if !collections.isEmpty {
            swap(&inRow, &rowCellsScratch)
            let t = try tableForAppend(plan.cls)
            for i in collections.indices {
                let column = try self.column(collections[i], in: t)
                if t.entry.columns[column].spec.kind == .collectionInRow, prepared[i].inlineByteCount <= InlineCollection.rowLimit {
                    if prepared[i].count > 0 { inRow.append((column, prepared[i].rowCell)) }
                } else {
                    later.append(i)
                }
            }
        }
        let key: Int64
        if plan.allPlain, let made = try createPlain(plan, values, extra: inRow) {
            key = made
        } else {
            key = try create(plan.cls, primaryKey: plan.primaryKeyValue.map { values[$0] }) { (t, row, links) throws(CoveError) in
                for j in 0..<values.count { try fill(t, at: plan.positions[j], values[j], &row, &links) }
                for (column, cell) in inRow { row[column] = cell }
            }
        }
        if !collections.isEmpty {
            // Emptied one by one: a few cells, and cheaper than removeAll(keepingCapacity:).
            while !inRow.isEmpty { inRow.removeLast() }
            swap(&inRow, &rowCellsScratch)
        }
        for i in collections.indices {
            if later.contains(i) {
                try assignCollection(plan.cls, key, collections[i], prepared[i])
            } else if collections[i].keepsBacklinks {
                for v in prepared[i].stored { try countBacklink(plan.cls, collections[i], source: key, v, 1) }
            }
        }
        return key
    }

    /// `create(_:_:)` for a plan whose names are all plain (`CreatePlan.allPlain`), when every
    /// value but the primary key is of exactly its column's type (nulls where allowed):
    /// straight into the row, with no closure, no list of links and no property copied. Nil
    /// (nothing done) for a value to convert or refuse, which the general path does with its
    /// message.
    private func createPlain(_ plan: CreatePlan, _ values: [Value], extra: [(column: Int, cell: CellValue)] = []) throws(CoveError) -> Int64? {
        try requireWrite()
        let t = try tableForAppend(plan.cls)
        var primaryKey: Value?
        if let j = plan.primaryKeyValue { primaryKey = try checkPrimaryKey(values[j], of: t) }
        // Values for as many properties as there are columns fill every column (each name is
        // another property, and only properties with a column reach this loop).
        var row = t.takeRow(fillingEvery: extra.isEmpty && values.count == t.defaults.count)
        for (column, cell) in extra { row[column] = cell }
        for j in 0..<values.count where j != plan.primaryKeyValue {
            let plain = t.plainColumnAt[plan.positions[j]]
            guard plain.column >= 0, let cell = PropertyCodec.exactCell(values[j], plain.spec) else {
                t.returnRow(row)
                return nil
            }
            row[plain.column] = cell
        }
        return try insertRow(plan.cls, t, primaryKey: primaryKey, row: &row)
    }

    /// The object of `plan`'s class whose primary key `values` give, its other values set from
    /// them, or a new object made from them; whether it was made.
    /// - Throws: as `create(_:_:)`, and `.invalidArgument` for a class without primary key.
    package func createOrUpdate(_ plan: CreatePlan, _ values: [Value]) throws(CoveError) -> Bool {
        guard let pk = plan.primaryKeyValue else {
            throw CoveError(.invalidArgument, "class '\(plan.cls.className)' has no primary key to update by")
        }
        try plan.requireValues(for: values)
        guard let key = try find(plan.cls, primaryKey: values[pk]) else {
            _ = try create(plan, values)
            return true
        }
        for j in 0..<values.count where j != pk {
            try set(plan.cls, key, plan.cls.properties[plan.positions[j]], values[j])
        }
        return false
    }

    /// What both creates share: checks the class and primary key, lets `fill` put the values
    /// into a row of defaults (and the links among them, checked, into its list), inserts the
    /// row, then files the links' backlinks under the new object's key.
    private func create(_ cls: ObjectSchema, primaryKey: Value?,
                        fill: (Table, inout [CellValue], inout [(property: Property, column: Int)]) throws(CoveError) -> Void) throws(CoveError) -> Int64 {
        try requireWrite()
        try Self.requireCreatable(cls)
        let t = try tableForAppend(cls)
        var normalizedPK: Value?
        if let v = primaryKey {
            normalizedPK = try checkPrimaryKey(v, of: t)
        } else if let p = t.primaryKey?.property {
            throw CoveError(.invalidArgument, "class '\(cls.className)' has primary key '\(p.name)': give its value")
        }
        var row = t.takeRow()
        var links: [(property: Property, column: Int)] = []
        do throws(CoveError) {
            try fill(t, &row, &links)
        } catch {
            t.returnRow(row)
            throw error
        }
        // What the link properties finally hold (a property named twice keeps its last value).
        var linked: [(property: Property, cell: CellValue)] = []
        for (p, c) in links where !linked.contains(where: { $0.property.key == p.key }) {
            linked.append((p, row[c]))
        }
        let key = try insertRow(cls, t, primaryKey: normalizedPK, row: &row)
        // The targets learn of the new object here, from the cells kept above: reading the row
        // back would write the table's pending objects at every create.
        for (p, cell) in linked {
            if p.isLink {
                try updateBacklink(cls, p, source: key, old: .null, new: cell)
            } else {
                let value = try PropertyCodec.value(cell, for: p, targetClassKey: 0)
                try updateMixedBacklink(cls, p, source: key, old: .null, new: value)
            }
        }
        return key
    }

    /// Refuses to create objects of an embedded class on their own.
    static func requireCreatable(_ cls: ObjectSchema) throws(CoveError) {
        if cls.isEmbedded {
            throw CoveError(.invalidArgument, "class '\(cls.className)' is embedded: create its objects in place through their parent")
        }
    }

    /// Refuses a property that takes no single value: backlinks (computed) and collections
    /// (filled through the collection).
    static func requireSingleValue(_ p: Property, of cls: ObjectSchema) throws(CoveError) {
        if p.isBacklinks {
            throw CoveError(.invalidArgument, "property '\(p.name)' of class '\(cls.className)' is backlinks: it is computed and cannot be set")
        }
        if p.collection != .none {
            throw CoveError(.wrongType, "property '\(p.name)' of class '\(cls.className)' is a \(p.collection.rawValue) (\(p.typeNotation)): fill it through the \(p.collection.rawValue), not as one value")
        }
    }

    /// Puts value `v` of the property at position `i` of `t`'s class into `row`; a link property
    /// (or a mixed one given a link) is checked first and also named in `links`, whose backlinks
    /// the create files once the object has its key. Skips the primary key (the create has it).
    private func fill(_ t: Table, at i: Int, _ v: Value, _ row: inout [CellValue], _ links: inout [(property: Property, column: Int)]) throws(CoveError) {
        let plain = t.plainColumnAt[i]
        if plain.column >= 0, let cell = PropertyCodec.exactCell(v, plain.spec) {
            row[plain.column] = cell
            return
        }
        let cls = t.cls
        let p = cls.properties[i]
        if p.isPrimaryKey { return }
        try Self.requireSingleValue(p, of: cls)
        if !p.isLink && !(p.type == .mixed && v.holdsLinks) {
            let c = t.columnOfPropertyAt[i]
            row[c >= 0 ? c : try column(p, in: t)] = try PropertyCodec.cell(v, for: p, of: cls)
            return
        }
        let cell = try PropertyCodec.cell(v, for: p, of: cls)
        try checkMixedLink(v, p, cls)
        if let target = p.type.objectClassName {
            if try objectSchema(target).isEmbedded, !v.isNull {
                throw CoveError(.invalidArgument, "property '\(p.name)' of class '\(cls.className)' holds an embedded \(target): create it in place (createEmbedded), not by linking an existing object")
            }
            try checkLinkTarget(v, target, p, cls)
        }
        let stored = t.columnOfPropertyAt[i]
        let c = stored >= 0 ? stored : try column(p, in: t)
        row[c] = cell
        links.append((p, c))
    }

    /// Whether the catalog (or this transaction's edits) holds a non-empty tree at `key`.
    func catalogContains(_ key: [UInt8]) throws(StorageError) -> Bool {
        saveLastTree()
        if let t = trees[key] { return !t.root.page.isNone }
        return try catalog.contains(key)
    }

    /// Adds a row of defaults to `cls`'s table under the next object key: embedded objects are
    /// made this way by their parent.
    func insertRow(_ cls: ObjectSchema) throws(CoveError) -> Int64 {
        let t = try tableForAppend(cls)
        var row = t.takeRow()
        return try insertRow(cls, t, primaryKey: nil, row: &row)
    }

    /// Adds `row` (taken from `t` by `takeRow`, and given back) to the table under the next
    /// object key, with `primaryKey` (checked) in its column. The key goes into its unique index
    /// first, under the object key the row gets: one descent finds a duplicate and files the
    /// new object.
    private func insertRow(_ cls: ObjectSchema, _ t: Table, primaryKey: Value?, row: inout [CellValue]) throws(CoveError) -> Int64 {
        defer { t.returnRow(row) }
        let key = t.entry.nextObjectKey
        let objectKey = Int64(bitPattern: key)
        if let v = primaryKey {
            let c = t.primaryKeyColumn
            guard c >= 0, let spec = t.primaryKeySpec else { throw CoveError(.internal, "class '\(cls.className)' has no primary-key column") }
            // checkPrimaryKey let through only values of exactly the key's type.
            guard let cell = PropertyCodec.exactCell(v, spec) else {
                throw CoveError(.internal, "class '\(cls.className)': primary key \(v) does not fit its column")
            }
            row[c] = cell
            guard try insertPrimaryKey(t, cls, v, objectKey) else {
                throw CoveError(.duplicateKey, "class '\(cls.className)' already has an object with primary key \(v)")
            }
        }
        do { try t.pending.append(key, row) } catch {
            if let v = primaryKey { try unindexPrimaryKey(cls, v) }
            throw CoveError(error)
        }
        t.entry.nextObjectKey = key + 1
        t.dirty = true
        for (p, c) in t.indexed {
            let value = try PropertyCodec.value(row[c], for: p, targetClassKey: 0)
            try updateIndex(cls, p, value, objectKey, remove: false)
        }
        changes.recordInsert(t.classKey, objectKey)
        if t.pending.count >= Table.pendingLimit { try t.writePending() }
        return objectKey
    }
}
