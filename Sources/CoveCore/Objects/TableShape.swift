// TableShape: what a table's columns mean to its class, worked out once. The columns of a class
// change only with the schema, so a realm keeps the shapes it worked out and a later transaction
// takes its table's shape back when the catalog entry lists the same columns: beginning a table
// costs a comparison of a few bytes instead of a dictionary and seven arrays. The realm keeps the
// tables of ended transactions too (`TableShapes.spareTables`), detached from their pages, so
// that the next transaction's table of the class is the same object, made again from its entry.
import CoveStorage

/// The columns of one class's table and what depends on them. Immutable: a migration that adds
/// or removes a column gives its table a new shape.
final class TableShape {
    /// The column list as the catalog entry stores it (see `TableEntry`): count, then property
    /// key, kind and nullability of each column.
    let columnBytes: [UInt8]
    let columns: [(property: Int64, spec: ColumnSpec)]
    let specs: [ColumnSpec]
    let columnOfProperty: [Int64: Int]
    /// Each column's default, the primary key's property and column, and the secondary indexes
    /// and their columns.
    let defaults: [CellValue]
    let primaryKey: (property: Property, column: Int)?
    let indexed: [(property: Property, column: Int)]
    /// The column of each property of the class, by its position in `cls.properties` (-1: none):
    /// a create finds its values' columns without hashing.
    let columnOfPropertyAt: [Int]
    /// By position in `cls.properties`, the column and its spec of each property a create fills
    /// in place, a single value that is neither link nor primary key (column -1 for the others):
    /// plain data, read without copying the property.
    let plainColumnAt: [(column: Int, spec: ColumnSpec)]
    /// By position in `cls.properties`, the property's key (-1 when it has none): a property
    /// named by its key (the C API's `_by_key` calls) is found without hashing.
    let propertyKeyAt: [Int64]
    /// By position in `cls.properties`, whether a set of a value of exactly its column's type
    /// only stores the value: a plain column (`plainColumnAt`) with no secondary index to keep.
    let storesOnlyAt: [Bool]
    /// The primary key's column and its spec, when the class has one (-1 and nil when not):
    /// `primaryKey` without its property to copy.
    let primaryKeyColumn: Int
    let primaryKeySpec: ColumnSpec?

    init(cls: ObjectSchema, columns: [(property: Int64, spec: ColumnSpec)]) {
        self.columns = columns
        columnBytes = TableEntry.encodedColumns(columns)
        let specs = columns.map(\.spec)
        self.specs = specs
        var byProperty: [Int64: Int] = [:]
        for (i, c) in columns.enumerated() { byProperty[c.property] = i }
        columnOfProperty = byProperty
        defaults = specs.map(\.defaultValue)
        let at = cls.properties.map { p in p.key.flatMap { byProperty[$0] } ?? -1 }
        columnOfPropertyAt = at
        var plain: [(column: Int, spec: ColumnSpec)] = []
        var primaryKey: (property: Property, column: Int)?
        var indexed: [(property: Property, column: Int)] = []
        for (i, p) in cls.properties.enumerated() {
            let c = at[i]
            let isPlain = c >= 0 && p.collection == .none && !p.isLink && !p.isBacklinks && !p.isPrimaryKey
            plain.append(isPlain ? (c, specs[c]) : (-1, ColumnSpec(.int)))
            guard c >= 0 else { continue }
            if p.isPrimaryKey { primaryKey = (p, c) }
            if p.hasSecondaryIndex { indexed.append((p, c)) }
        }
        plainColumnAt = plain
        propertyKeyAt = cls.properties.map { $0.key ?? -1 }
        storesOnlyAt = cls.properties.indices.map { plain[$0].column >= 0 && !cls.properties[$0].hasSecondaryIndex }
        self.primaryKey = primaryKey
        self.indexed = indexed
        primaryKeyColumn = primaryKey?.column ?? -1
        primaryKeySpec = primaryKey.map { specs[$0.column] }
    }
}

/// The table shapes a realm has worked out, by class key, for one schema: the realm starts a new
/// set whenever its schema changes.
package final class TableShapes {
    var byClassKey: [UInt32: TableShape] = [:]
    /// The tables of ended transactions, emptied and detached from their pages (see
    /// `ObjectStore.Table.park`), for the next transaction's table of the same class: beginning
    /// it then allocates nothing.
    var spareTables: [UInt32: ObjectStore.Table] = [:]

    package init() {}
}
