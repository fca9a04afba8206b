// Edits of a table. Every edit decodes the one or two clusters it touches, changes the decoded
// objects, and writes them back as as many pages as they need: pages this transaction already
// wrote are reused in place, committed ones are replaced by new pages and freed (copy-on-write),
// and the references in the table's tree are updated. A cluster that falls under a quarter of a
// page is merged with a neighbour, or shares its objects with it when both do not fit one page.

extension ClusterTree {
    // MARK: - Checks

    /// Checks that `value` may be stored in column `j`.
    func validate(_ value: CellValue, column j: Int) throws(StorageError) {
        try ClusterLayout.validate(value, specs[j], column: j)
    }

    /// Moves the largest inline byte values of `row` to overflow pages until the object takes at
    /// most a quarter of a page (so a page holds several objects), or nothing longer than an
    /// overflow reference is left inline.
    func fitRow(_ row: inout [StoredCell]) throws(StorageError) {
        let limit = ClusterLayout.rowLimitBits(columns: specs.count)
        while ClusterRows.bits(of: row, specs: specs) > limit {
            var largest = -1
            var size = ClusterLayout.overflowRefSize
            for j in 0..<row.count {
                if case .value(.bytes(let b)) = row[j], b.count > size { largest = j; size = b.count }
            }
            guard largest >= 0, case .value(.bytes(let bytes)) = row[largest] else { return }
            let ref = try CoveStorage.withBytes(bytes) { b throws(StorageError) in try index.writeOverflow(b) }
            row[largest] = .overflow(ref, length: UInt64(bytes.count))
        }
    }

    /// Frees the overflow chains of the values of a row that goes away.
    func freeChains(_ cells: some Sequence<StoredCell>) throws(StorageError) {
        for cell in cells {
            if case .overflow(let ref, let length) = cell { try index.freeOverflow(ref, length: length) }
        }
    }

    // MARK: - Writing clusters

    /// Writes `rows` as one or more clusters in place of the clusters `old` (whose objects
    /// `rows` holds, with the edit applied), and updates the table's tree.
    /// Objects from `fitted` on are known to fit a page alone (an append's new objects).
    mutating func rewrite(_ rows: ClusterRows, replacing old: [ClusterRef], packLeft: Bool, fitted: Int? = nil) throws(StorageError) {
        var rows = rows
        // Objects written under fewer columns may have grown past a page alone since (addColumn).
        let capacityBits = (pageSize &- ClusterLayout.overhead(columns: specs.count)) &* 8
        for i in 0..<(fitted ?? rows.count) where rows.bits(i, specs: specs) > capacityBits {
            var row = (0..<specs.count).map { rows.columns[$0][i] }
            try fitRow(&row)
            for j in 0..<specs.count { rows.columns[j][i] = row[j] }
        }
        var reusable = old.compactMap { ref in
            ref.page.version == store.version && store.isWritable(ref.page.pgno) ? ref.page.pgno : nil
        }
        var written: [ClusterRef] = []
        if rows.count > 0 {
            let plan = rows.plan(specs: specs, packLeft: packLeft)
            for (k, range) in plan.enumerated() {
                let pgno: PageNumber
                let page: UnsafeMutableRawPointer
                // The full clusters of an append: later appends leave them alone, so they are
                // placed as new pages; the last one, which they rewrite, takes the place of the old.
                let full = packLeft && k < plan.count - 1
                if !full, let reused = reusable.popLast() {
                    pgno = reused
                    page = store.writablePage(reused)
                } else {
                    (pgno, page) = try store.allocateForOverwrite(replacing: full ? nil : old.last?.page)
                }
                try rows.encode(range, specs: specs, into: page)
                debugCheckPage(page, pgno: pgno)
                written.append(ClusterRef(key: rows.keys[range.lowerBound], page: PageRef(pgno: pgno, version: store.version),
                                          count: UInt64(range.count)))
            }
        }
        let kept = Set(written.map(\.page.pgno))
        for ref in old where !kept.contains(ref.page.pgno) { store.free(ref.page.pgno) }
        let newKeys = Set(written.map(\.key))
        for ref in old where !newKeys.contains(ref.key) { try index.remove(ref.key) }
        for ref in written { try ref.withEncoded { v throws(StorageError) in _ = try index.put(ref.key, v) } }
    }

    /// The cluster after `ref` in key order, if any.
    func next(after ref: ClusterRef) throws(StorageError) -> ClusterRef? {
        guard ref.key < UInt64.max else { return nil }
        let cursor = try index.cursor(from: ref.key &+ 1)
        guard cursor.isValid else { return nil }
        let k = try cursor.u64Key()
        return try cursor.withValue { v throws(StorageError) in try ClusterRef(key: k, v) }
    }

    /// The cluster before `ref` in key order, if any.
    func previous(before ref: ClusterRef) throws(StorageError) -> ClusterRef? {
        guard ref.key > 0 else { return nil }
        let cursor = try index.cursor(from: ref.key &- 1, reverse: true)
        guard cursor.isValid else { return nil }
        let k = try cursor.u64Key()
        return try cursor.withValue { v throws(StorageError) in try ClusterRef(key: k, v) }
    }

    /// Writes back the edited objects of the cluster `ref`, first merging them with a neighbour
    /// when they fell under the minimum fill (or to nothing) and the table has other clusters.
    mutating func rewriteRebalancing(_ rows: ClusterRows, _ ref: ClusterRef) throws(StorageError) {
        var rows = rows
        var old = [ref]
        if index.count > 1 && (rows.count == 0 || rows.bound(specs: specs) < ClusterLayout.minFill) {
            if let right = try next(after: ref) {
                rows.append(contentsOf: try ClusterRows(try leaf(right), specs: specs))
                old.append(right)
            } else if let left = try previous(before: ref) {
                var merged = try ClusterRows(try leaf(left), specs: specs)
                merged.append(contentsOf: rows)
                rows = merged
                old.insert(left, at: 0)
            }
        }
        try rewrite(rows, replacing: old, packLeft: false)
    }

    // MARK: - Public API

    /// Adds object `key` with one value per column.
    /// - Throws: `.invalidArgument` if `key` is already present, for a wrong number of values, a
    ///   value of the wrong kind or null in a non-nullable column (naming the column), or a
    ///   schema too wide for a page; `.corrupt`; allocation errors.
    /// - Complexity: O(log n + c · b) for c columns and b objects per cluster (the cluster is
    ///   rewritten), plus O(m) for m bytes of large values.
    public mutating func insert(_ key: UInt64, _ values: [CellValue]) throws(StorageError) {
        guard values.count == specs.count else {
            throw .invalidArgument("insert of object \(key): \(values.count) values for \(specs.count) columns")
        }
        for j in 0..<values.count { try validate(values[j], column: j) }
        try ClusterLayout.checkWidth(specs)
        var row = values.map { StoredCell.value($0) }
        guard let ref = try cluster(containing: key) else {
            try fitRow(&row)
            var rows = ClusterRows(columnCount: specs.count)
            rows.insert(key: key, row: row, at: 0)
            try rewrite(rows, replacing: [], packLeft: false)
            syncRoot(objectDelta: 1)
            return
        }
        let leaf = try self.leaf(ref)
        let (i, found) = leaf.lowerBound(key)
        guard !found else { throw .invalidArgument("object key \(key) is already in the table") }
        try fitRow(&row)
        var rows = try ClusterRows(leaf, specs: specs)
        rows.insert(key: key, row: row, at: i)
        var appending = false
        if i == leaf.count { appending = try next(after: ref) == nil }
        try rewrite(rows, replacing: [ref], packLeft: appending)
        syncRoot(objectDelta: 1)
    }

    /// Adds objects whose keys ascend and are all greater than every key in the table: the last
    /// cluster is decoded once, the rows appended, and the clusters written packed full, so a
    /// bulk load costs one encode per page instead of one per object.
    /// - Throws: as `insert`; `.invalidArgument` when a key does not follow the table's last.
    /// - Complexity: O(log n + r · c) for r rows and c columns, plus the bytes of large values.
    public mutating func append(_ rows: [(key: UInt64, values: [CellValue])]) throws(StorageError) {
        var batch = ClusterBatch(specs: specs)
        for (key, values) in rows { try batch.append(key, values) }
        try append(&batch)
    }

    /// Adds the objects of `batch` (which must have been made for this table's columns) after
    /// every key in the table, as `append(_:)` does, and empties the batch (keeping its storage).
    /// The batch's cells move into the pages' layout without being copied. If it throws, the
    /// write transaction must be rolled back; the batch is then empty.
    /// - Complexity: O(log n + r · c) for r rows and c columns, plus the bytes of large values.
    public mutating func append(_ batch: inout ClusterBatch) throws(StorageError) {
        guard let first = batch.rows.keys.first else { return }
        guard batch.specs == specs else {
            throw .invalidArgument("a batch of \(batch.specs.count) columns appended to a table of \(specs.count)")
        }
        var rows = ClusterRows()
        swap(&rows, &batch.rows)
        let wide = batch.wide
        let added = rows.count
        batch.removeAll()
        defer {
            // The arrays go back to the batch, emptied, for its next objects.
            rows.keys.removeAll(keepingCapacity: true)
            for j in 0..<rows.columns.count { rows.columns[j].removeAll(keepingCapacity: true) }
            swap(&rows, &batch.rows)
        }
        var old: [ClusterRef] = []
        var fitted = 0
        if !index.isEmpty {
            let cursor = try index.cursor(from: UInt64?.none, reverse: true)
            let k = try cursor.u64Key()
            let ref = try cursor.withValue { v throws(StorageError) in try ClusterRef(key: k, v) }
            let leaf = try self.leaf(ref)
            guard first > leaf.key(leaf.count &- 1) else {
                throw .invalidArgument("append of object \(first): the table already holds keys up to \(leaf.key(leaf.count &- 1))")
            }
            if wide.isEmpty, try appendInPlace(rows, to: leaf, ref) {
                syncRoot(objectDelta: Int64(added))
                return
            }
            let last = try ClusterRows(leaf, specs: specs)
            rows.keys.insert(contentsOf: last.keys, at: 0)
            for j in 0..<specs.count { rows.columns[j].insert(contentsOf: last.columns[j], at: 0) }
            fitted = last.count
            old = [ref]
        }
        for i in wide {
            let at = fitted &+ i
            var row = (0..<specs.count).map { rows.columns[$0][at] }
            try fitRow(&row)
            for j in 0..<specs.count { rows.columns[j][at] = row[j] }
        }
        try rewrite(rows, replacing: old, packLeft: true, fitted: fitted)
        syncRoot(objectDelta: Int64(added))
    }

    /// Writes the last cluster `ref` (read as `leaf`) again with `rows` added, through
    /// `ClusterLeaf.appending`, when they fit its layout; false (nothing changed) otherwise.
    private mutating func appendInPlace(_ rows: ClusterRows, to leaf: ClusterLeaf, _ ref: ClusterRef) throws(StorageError) -> Bool {
        let pgno: PageNumber
        if ref.page.version == store.version && store.isWritable(ref.page.pgno) {
            // The page this transaction wrote is rewritten: lay it out beside, then copy.
            pgno = ref.page.pgno
            let scratch = UnsafeMutableRawPointer.allocate(byteCount: pageSize, alignment: 16)
            defer { scratch.deallocate() }
            guard leaf.appending(rows, specs: specs, into: scratch) else { return false }
            store.writablePage(pgno).copyMemory(from: scratch, byteCount: pageSize)
        } else {
            // A committed page is replaced: lay the new one out where it goes. A page refused
            // goes back at once (this transaction's own pages are reusable at once).
            let page: UnsafeMutableRawPointer
            (pgno, page) = try store.allocateForOverwrite(replacing: ref.page)
            guard leaf.appending(rows, specs: specs, into: page) else {
                store.free(pgno)
                return false
            }
            store.free(ref.page.pgno)
        }
        debugCheckPage(store.writablePage(pgno), pgno: pgno)
        let written = ClusterRef(key: ref.key, page: PageRef(pgno: pgno, version: store.version),
                                 count: ref.count &+ UInt64(rows.count))
        try written.withEncoded { v throws(StorageError) in _ = try index.put(written.key, v) }
        return true
    }

    /// Removes object `key` and frees its large values' overflow pages (not its collections'
    /// trees: the object layer frees those).
    /// - Returns: whether `key` was present.
    /// - Complexity: O(log n + c · b)
    @discardableResult
    public mutating func remove(_ key: UInt64) throws(StorageError) -> Bool {
        guard let at = try locate(key) else { return false }
        try remove(at: at)
        return true
    }

    /// Removes the object at `location`, which `locate` gave since the table was last edited
    /// (`remove(_:)` without finding the object again): in place when it can, else by laying
    /// the cluster out again (rebalanced with a neighbour when it falls under a quarter of a
    /// page).
    /// - Throws: as `remove(_:)`.
    public mutating func remove(at location: ClusterLocation) throws(StorageError) {
        let leaf = location.leaf, ref = location.ref, i = location.index
        if leaf.canRemoveInPlace(i, specs: specs) {
            try removeInPlace(leaf, ref, i)
            return
        }
        var rows = try ClusterRows(leaf, specs: specs)
        let row = rows.remove(at: i)
        try freeChains(row)
        try rewriteRebalancing(rows, ref)
        syncRoot(objectDelta: -1)
    }

    /// Stores `value` in column `column` of object `key`: in place when the page's layout holds
    /// it as it stands (`ClusterLeaf.holds`), else by laying the cluster out again.
    /// - Throws: `.invalidArgument` for a missing key or column, a value of the wrong kind or
    ///   null in a non-nullable column; `.corrupt`; allocation errors.
    /// - Complexity: O(log m) for m clusters in place; O(log n + c · b) laid out again, plus
    ///   O(m) for a large value of m bytes.
    public mutating func set(_ key: UInt64, column: Int, _ value: CellValue) throws(StorageError) {
        try checkColumn(column)
        try validate(value, column: column)
        guard let at = try locate(key) else { throw missing(key) }
        let leaf = at.leaf, ref = at.ref, i = at.index
        if try setInPlace(leaf, ref, i, column: column, value) { return }
        var rows = try ClusterRows(leaf, specs: specs)
        try freeChains(CollectionOfOne(rows.columns[column][i]))
        rows.columns[column][i] = .value(value)
        var row = (0..<specs.count).map { rows.columns[$0][i] }
        try fitRow(&row)
        for j in 0..<specs.count { rows.columns[j][i] = row[j] }
        try rewriteRebalancing(rows, ref)
        syncRoot()
    }

    /// Writes `value` over object `i` of the cluster `ref` (read as `leaf`) without laying the
    /// page out again, when its layout holds the value as it stands (`ClusterLeaf.overwrite`).
    /// The object's size does not change, so the cluster keeps its objects and its neighbours.
    /// - Returns: false, having changed nothing, when the page must be laid out again.
    /// - Complexity: O(1) for a page this transaction wrote, O(log m) for m clusters otherwise.
    private mutating func setInPlace(_ leaf: ClusterLeaf, _ ref: ClusterRef, _ i: Int, column: Int,
                                     _ value: CellValue) throws(StorageError) -> Bool {
        let kind = specs[column].kind
        guard leaf.holds(value, at: column, i, kind: kind) else { return false }
        try editInPlace(ref, objectDelta: 0) { page throws(StorageError) in
            leaf.overwrite(column, i, with: value, kind: kind, in: page)
        }
        return true
    }

    /// Removes object `i` of the cluster `ref` (read as `leaf`) without laying the page out
    /// again (`ClusterLeaf.removeInPlace`), and frees its values' overflow chains.
    /// - Complexity: O(b + log m) for b bytes in the page and m clusters.
    private mutating func removeInPlace(_ leaf: ClusterLeaf, _ ref: ClusterRef, _ i: Int) throws(StorageError) {
        for j in 0..<leaf.columnCount where specs[j].kind.isBytes && !leaf.isNull(j, i) {
            if case .overflow(let chain, let length) = try leaf.bytesRef(j, i) { try index.freeOverflow(chain, length: length) }
        }
        let specs = self.specs
        try editInPlace(ref, objectDelta: -1) { page throws(StorageError) in try leaf.removeInPlace(i, specs: specs, into: page) }
    }

    /// Lets `edit` change the page of cluster `ref` in place: the page itself when this
    /// transaction wrote it, else a copy that replaces it (the committed page freed). The
    /// cluster's reference is filed again when its page or its count (`objectDelta`) changed.
    private mutating func editInPlace(_ ref: ClusterRef, objectDelta: Int,
                                      _ edit: (UnsafeMutableRawPointer) throws(StorageError) -> Void) throws(StorageError) {
        var pgno = ref.page.pgno
        if ref.page.version == store.version && store.isWritable(pgno) {
            try edit(store.writablePage(pgno))
            debugCheckPage(store.writablePage(pgno), pgno: pgno)
            if objectDelta == 0 { return }
        } else {
            let page: UnsafeMutableRawPointer
            (pgno, page) = try store.allocateCopy(of: ref.page.pgno)
            try edit(page)
            debugCheckPage(page, pgno: pgno)
            store.free(ref.page.pgno)
        }
        let written = ClusterRef(key: ref.key, page: PageRef(pgno: pgno, version: store.version),
                                 count: UInt64(Int(ref.count) &+ objectDelta))
        try written.withEncoded { v throws(StorageError) in _ = try index.put(written.key, v) }
        syncRoot(objectDelta: Int64(objectDelta))
    }

    /// Adds a column at the end. No page is rewritten: objects read the column's default
    /// (`ColumnSpec.defaultValue`) until a page is written again.
    /// - Throws: `.invalidArgument` if the schema would become too wide for a page.
    /// - Complexity: O(c)
    public mutating func addColumn(_ spec: ColumnSpec) throws(StorageError) {
        try ClusterLayout.checkWidth(specs + [spec])
        specs.append(spec)
    }

    /// Removes column `index`, rewriting every cluster and freeing the column's overflow pages
    /// (not collection trees: the object layer frees those). Later columns move down by one.
    /// - Complexity: O(n · c)
    public mutating func removeColumn(_ index: Int) throws(StorageError) {
        try checkColumn(index)
        var refs: [ClusterRef] = []
        try self.index.forEach(from: nil) { k, v throws(StorageError) -> Bool in
            refs.append(try ClusterRef(key: k, v))
            return true
        }
        let oldSpecs = specs
        var newSpecs = specs
        newSpecs.remove(at: index)
        for ref in refs {
            specs = oldSpecs
            var rows = try ClusterRows(try leaf(ref), specs: oldSpecs)
            try freeChains(rows.columns[index])
            rows.columns.remove(at: index)
            specs = newSpecs
            try rewrite(rows, replacing: [ref], packLeft: false)
        }
        specs = newSpecs
        syncRoot()
    }

    /// Removes every object and frees every page of the table: its tree, its clusters and their
    /// overflow chains (not collection trees: the object layer frees those).
    /// - Complexity: O(p) for p pages.
    public mutating func removeAll() throws(StorageError) {
        var pages: [PageNumber] = []
        try forEachPage { pgno throws(StorageError) in pages.append(pgno) }
        // Freed only once all are known: a page this transaction wrote is reusable at once.
        for pgno in pages { store.free(pgno) }
        index = BTree(store: store, root: .empty, keyKind: .u64)
        root = .empty
    }
}
