// ClusterBatch: objects on their way to the end of a table. A bulk load adds them one by one,
// each checked as it arrives and stored by column, and `ClusterTree.append(_:)` lays the whole
// batch out as packed pages: no row is built twice, and none is checked twice.

/// Objects waiting to be appended after every key of a table, checked and held by column.
public struct ClusterBatch {
    @usableFromInline var rows: ClusterRows
    /// The columns the batch was made for.
    public let specs: [ColumnSpec]
    /// Planning cost of a row without its heap bytes, and the cost over which `append` moves
    /// a row's largest values to overflow pages (a quarter of a page, as `fitRow`).
    @usableFromInline let fixedBits: Int
    @usableFromInline let rowLimitBits: Int
    /// Rows over `rowLimitBits`.
    @usableFromInline var wide: [Int] = []
    /// Whether the columns were found narrow enough for a page (checked on the first row).
    @usableFromInline var widthChecked = false

    /// An empty batch for a table whose columns are `specs`.
    public init(specs: [ColumnSpec]) {
        self.specs = specs
        rows = ClusterRows(columnCount: specs.count)
        var bits = 64
        for spec in specs { bits &+= ClusterLayout.fixedBits(spec) }
        fixedBits = bits
        rowLimitBits = ClusterLayout.rowLimitBits(columns: specs.count)
    }

    /// The number of objects in the batch.
    @inlinable public var count: Int { rows.count }
    @inlinable public var isEmpty: Bool { rows.count == 0 }

    /// Adds object `key` with one value per column.
    /// - Throws: `.invalidArgument` for a key not above the last one added, a wrong number of
    ///   values, a value of the wrong kind or null in a non-nullable column (naming the column),
    ///   or a schema too wide for a page; the batch is unchanged then.
    /// - Complexity: O(c) for c columns.
    public mutating func append(_ key: UInt64, _ values: [CellValue]) throws(StorageError) {
        if !widthChecked {
            try ClusterLayout.checkWidth(specs)
            widthChecked = true
        }
        guard values.count == specs.count else {
            throw .invalidArgument("a row of \(values.count) values for \(specs.count) columns")
        }
        if let last = rows.keys.last, key <= last {
            throw .invalidArgument("append of object \(key) after \(last): keys must ascend")
        }
        var heapBytes = 0
        for j in 0..<values.count {
            try ClusterLayout.validate(values[j], specs[j], column: j)
            if case .bytes(let b) = values[j] { heapBytes &+= b.count }
        }
        if fixedBits &+ 8 &* heapBytes > rowLimitBits { wide.append(rows.count) }
        rows.keys.append(key)
        rows.columns.withUnsafeMutableBufferPointer { columns in
            for j in 0..<values.count { columns[j].append(.value(values[j])) }
        }
    }

    /// The position in the batch of object `key`, or nil when the batch does not hold it.
    /// Keys ascend, so the object created last (the one a create-then-set edits) is found by
    /// one comparison, and a key outside the batch's range by two.
    /// - Complexity: O(1) for the last object or a key out of range, O(log r) for r objects.
    @inlinable
    public func position(of key: UInt64) -> Int? {
        let keys = rows.keys
        guard let last = keys.last, key <= last, key >= keys[0] else { return nil }
        if key == last { return keys.count &- 1 }
        var low = 0, high = keys.count &- 1
        while low < high {
            let mid = (low &+ high) / 2
            if keys[mid] < key { low = mid &+ 1 } else { high = mid }
        }
        return keys[low] == key ? low : nil
    }

    /// The value in column `column` of the object at `position`.
    /// - Precondition: `position` from `position(of:)`, `column` below `specs.count`.
    @inlinable
    public func cell(at position: Int, column: Int) -> CellValue {
        // A batch holds its values whole: overflow references are made only when the batch
        // is written to the tree.
        guard case .value(let value) = rows.columns[column][position] else {
            preconditionFailure("a pending object's cell is an overflow reference")
        }
        return value
    }

    /// Replaces the value in column `column` of the object at `position`, checked as `append`
    /// checks a value; the object is marked wide (its largest values go to overflow pages when
    /// the batch is written) when its byte values grow past a quarter of a page, and unmarked
    /// when they shrink under it.
    /// - Throws: `.invalidArgument` for a column out of range, a value of the wrong kind or null
    ///   in a non-nullable column (naming the column); the batch is unchanged then.
    /// - Complexity: O(c) for c columns when a byte value changes, O(1) otherwise.
    public mutating func set(at position: Int, column: Int, _ value: CellValue) throws(StorageError) {
        guard column >= 0, column < specs.count else {
            throw .invalidArgument("column \(column) of a table of \(specs.count) columns")
        }
        precondition(position >= 0 && position < rows.count, "no pending object at \(position)")
        try ClusterLayout.validate(value, specs[column], column: column)
        rows.columns[column][position] = .value(value)
        guard specs[column].kind.isBytes else { return }
        var heapBytes = 0
        for j in 0..<specs.count { heapBytes &+= rows.columns[j][position].heapBytes }
        let isWide = fixedBits &+ 8 &* heapBytes > rowLimitBits
        // `wide` ascends: it is filled in key order, and kept so here.
        var at = 0, end = wide.count
        while at < end {
            let mid = (at &+ end) / 2
            if wide[mid] < position { at = mid &+ 1 } else { end = mid }
        }
        let marked = at < wide.count && wide[at] == position
        if isWide && !marked { wide.insert(position, at: at) }
        if !isWide && marked { wide.remove(at: at) }
    }

    /// Empties the batch, keeping its storage for the next objects.
    public mutating func removeAll() {
        rows.keys.removeAll(keepingCapacity: true)
        for j in 0..<rows.columns.count { rows.columns[j].removeAll(keepingCapacity: true) }
        wide.removeAll(keepingCapacity: true)
    }
}

extension ClusterLayout {
    /// The planning cost over which a row's largest values go to overflow pages: a quarter of
    /// a page, so that a page always holds several objects.
    static func rowLimitBits(columns: Int) -> Int { (pageSize &- overhead(columns: columns)) &* 8 / 4 }

    /// Refuses a schema whose widest possible object (every byte value inline up to the size
    /// of an overflow reference) would not fit a page alone.
    static func checkWidth(_ specs: [ColumnSpec]) throws(StorageError) {
        var bits = 64
        for spec in specs {
            bits &+= fixedBits(spec) &+ (spec.kind.isBytes ? 8 &* overflowRefSize : 0)
        }
        guard specs.count <= 0xFFFF, overhead(columns: specs.count) &* 8 &+ bits <= pageSize &* 8 else {
            throw .invalidArgument("a table of \(specs.count) columns is too wide: one object of it would not fit a page")
        }
    }

    static func describe(_ value: CellValue) -> String {
        switch value {
        case .null: return "null"
        case .bool(let b): return "bool \(b)"
        case .int(let i): return "int \(i)"
        case .float(let f): return "float \(f)"
        case .double(let d): return "double \(d)"
        case .timestamp(let s, let ns): return "timestamp \(s)s \(ns)ns"
        case .bytes16: return "16 bytes (decimal128 or uuid)"
        case .bytes12: return "12 bytes (objectId)"
        case .link(let k): return "link to \(k)"
        case .bytes(let b): return "\(b.count) bytes"
        case .root: return "a collection root"
        }
    }

    /// Checks that `value` may be stored in column `j`.
    static func validate(_ value: CellValue, _ spec: ColumnSpec, column j: Int) throws(StorageError) {
        if case .null = value {
            guard spec.nullable else { throw .invalidArgument("column \(j) is a non-nullable \(spec.kind) column, got null") }
            return
        }
        guard value.fits(spec.kind) else {
            throw .invalidArgument("column \(j) is a \(spec.kind) column, got \(describe(value))")
        }
        if case .bytes(let b) = value, b.count > maxStoredValueLength {
            throw .invalidArgument("column \(j): a value of \(b.count) bytes is longer than \(maxStoredValueLength)")
        }
    }
}
