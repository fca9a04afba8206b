// Salvage: what can still be read of one version of a damaged file, copied into the first write
// transaction of a new file. The catalog, the tables, the collection areas and the collection
// trees are walked tolerantly (CoveStorage, Storage+Salvage.swift): a page that cannot be read
// loses what lives on it and the walk goes on. Object keys are kept, so links stay as they were;
// a link to an object that was lost is dropped (a single link or a map's value becomes null, a
// list of links or a set loses the element, a mixed value nulls the link inside it), and an
// embedded object whose parent was lost goes with it. Indexes, primary-key indexes and
// backlinks are never read from the damaged file: they are built anew from what was copied.
import CoveStorage

/// What salvage made of one class of a damaged file.
public struct SalvageClassReport: Sendable, Equatable {
    public var className: String
    /// Objects copied into the new file.
    public var objectsCopied = 0
    /// Objects of the damaged file the new one does not hold: on pages that could not be read,
    /// embedded objects whose parent was lost, objects whose primary key could not be read. Nil
    /// when the class's table entry itself could not be read, so that its count is unknown.
    public var objectsLost: Int? = 0
    /// Lists, sets and maps of copied objects of which some elements could not be read: the
    /// object keeps the elements that could.
    public var collectionsDamaged = 0
    /// Single values of copied objects that could not be read (a damaged overflow page of a long
    /// string or binary value): the new file holds the property's default instead.
    public var valuesLost = 0
    /// Links from copied objects to objects that were lost, taken out.
    public var linksDropped = 0
    /// The pages that could not be read where this class's objects, their values and
    /// collections live, ascending.
    public var damagedPages: [UInt64] = []

    public init(className: String) {
        self.className = className
    }

    /// Whether every object, value and link of the class was copied.
    public var isComplete: Bool {
        objectsLost == 0 && collectionsDamaged == 0 && valuesLost == 0 && linksDropped == 0 && damagedPages.isEmpty
    }
}

/// What `Realm.salvage(fromFile:toFile:)` copied out of a damaged file, and what it could not.
public struct SalvageReport: Sendable, Equatable, CustomStringConvertible {
    /// The version salvaged: the newest whose schema could be read.
    public var version: UInt64
    /// The newest version the file's meta slots hold.
    public var newestVersion: UInt64
    /// About the versions: the one an ordinary open would take instead, newer ones whose schema
    /// could not be read.
    public var versionNotes: [String] = []
    /// Per class of the schema, in schema order.
    public var classes: [SalvageClassReport] = []
    /// Pages of the catalog that could not be read (the entries they held were lost), ascending.
    public var catalogPages: [UInt64] = []
    /// Every page that could not be read, the catalog's and the classes', ascending.
    public var damagedPages: [UInt64] {
        Array(Set(catalogPages + classes.flatMap(\.damagedPages))).sorted()
    }

    public init(version: UInt64, newestVersion: UInt64) {
        self.version = version
        self.newestVersion = newestVersion
    }

    /// Whether the new file holds everything the newest version held.
    public var isComplete: Bool {
        version == newestVersion && catalogPages.isEmpty && classes.allSatisfy(\.isComplete)
    }

    public var description: String {
        var lines = ["version \(version) salvaged" + (version == newestVersion ? "" : " (the newest, version \(newestVersion), could not be)")]
        lines += versionNotes
        for c in classes {
            var parts = ["\(c.objectsCopied) objects copied"]
            if let lost = c.objectsLost {
                if lost > 0 { parts.append("\(lost) lost") }
            } else {
                parts.append("its table could not be read: how many were lost is unknown")
            }
            if c.collectionsDamaged > 0 { parts.append("\(c.collectionsDamaged) collections damaged") }
            if c.valuesLost > 0 { parts.append("\(c.valuesLost) values lost") }
            if c.linksDropped > 0 { parts.append("\(c.linksDropped) links dropped") }
            if !c.damagedPages.isEmpty { parts.append("damaged pages " + c.damagedPages.map(String.init).joined(separator: ", ")) }
            lines.append("\(c.className): " + parts.joined(separator: ", "))
        }
        if !catalogPages.isEmpty {
            lines.append("catalog: damaged pages " + catalogPages.map(String.init).joined(separator: ", "))
        }
        lines.append(isComplete ? "nothing was lost" : "some data was lost")
        return lines.joined(separator: "\n")
    }

    /// The report as JSON: what the C API and the command-line tool hand out.
    public func json() -> JSONValue {
        func pages(_ p: [UInt64]) -> JSONValue { .array(p.map { .int(Int64(bitPattern: $0)) }) }
        return .object([
            JSONMember("version", .int(Int64(bitPattern: version))),
            JSONMember("newest_version", .int(Int64(bitPattern: newestVersion))),
            JSONMember("complete", .bool(isComplete)),
            JSONMember("version_notes", .array(versionNotes.map { .string($0) })),
            JSONMember("damaged_pages", pages(damagedPages)),
            JSONMember("catalog_pages", pages(catalogPages)),
            JSONMember("classes", .array(classes.map { c in
                .object([
                    JSONMember("class", .string(c.className)),
                    JSONMember("objects_copied", .int(Int64(c.objectsCopied))),
                    JSONMember("objects_lost", c.objectsLost.map { .int(Int64($0)) } ?? .null),
                    JSONMember("collections_damaged", .int(Int64(c.collectionsDamaged))),
                    JSONMember("values_lost", .int(Int64(c.valuesLost))),
                    JSONMember("links_dropped", .int(Int64(c.linksDropped))),
                    JSONMember("damaged_pages", pages(c.damagedPages)),
                ])
            })),
        ])
    }
}

/// The catalog of one version of a damaged file, as far as it can be read: the schema (without
/// it nothing can be salvaged), the table entries and the collection areas.
package struct SalvageCatalog {
    let pages: SalvagePages
    let schemaRecord: [UInt8]
    package let schema: Schema
    var tables: [UInt32: [UInt8]] = [:]
    var areas: [UInt32: TreeRoot] = [:]
    var lost: [LostPage] = []

    /// Reads the catalog of `pages`' version.
    /// - Throws: `.corrupt` when the schema record cannot be read or decoded.
    package init(reading pages: SalvagePages) throws(CoveError) {
        self.pages = pages
        var record: [UInt8]?
        var tables: [UInt32: [UInt8]] = [:], areas: [UInt32: TreeRoot] = [:], lost: [LostPage] = []
        let catalog = BTree(store: pages, root: pages.snapshot.catalog, keyKind: .bytes)
        do {
            try catalog.salvageEach({ (key, value) throws(StorageError) in
                guard case .bytes(let k) = key, let tag = k.first else { return }
                let classKey = UInt32(truncatingIfNeeded: CatalogKey.number(bigEndian: k.dropFirst().prefix(4)))
                switch tag {
                case CatalogKey.schemaTag: record = value
                case CatalogKey.tableTag where k.count == 5: tables[classKey] = value
                case CatalogKey.collectionsTag where k.count == 5 && value.count == TreeRoot.encodedSize:
                    areas[classKey] = value.withUnsafeBytes { TreeRoot.decode(from: $0.baseAddress!) }
                default: break
                }
            }, lost: { lost.append($0) })
        } catch {
            throw CoveError(error)
        }
        guard let record else {
            let where_ = lost.isEmpty ? "the catalog has none" : "it was on a damaged page (" + Self.describe(lost) + ")"
            throw CoveError(.corrupt, "the schema record of version \(pages.version) cannot be read: \(where_)")
        }
        schemaRecord = record
        schema = try SchemaRecord.decode(record).schema
        self.tables = tables
        self.areas = areas
        self.lost = lost
    }

    static func describe(_ lost: [LostPage]) -> String {
        lost.map { "page \($0.page): \($0.reason)" }.joined(separator: "; ")
    }
}

/// One salvage: the catalog read, the new file's transaction, and what was found so far.
package final class Salvage {
    let catalog: SalvageCatalog
    let source: SalvagePages
    let target: TransactionPages
    let schema: Schema
    /// The objects that survive, by class key: first those whose rows could be read, then
    /// (embedded classes) those a surviving parent still holds.
    var alive: [UInt32: Set<Int64>] = [:]
    /// The elements of each inline collection kept in a class's collection area, by entry key.
    var areaEntries: [UInt32: [[UInt8]: [UInt8]]] = [:]
    var reports: [UInt32: SalvageClassReport] = [:]
    var pages: [UInt32: Set<UInt64>] = [:]

    /// Rows of a table put in the new file per batch.
    static let batchRows = 256

    /// Copies what can be read of `catalog`'s version into `w`, the first write transaction of a
    /// new file, with indexes, primary-key indexes and backlinks built anew; sets `w.catalog`
    /// (the caller commits).
    package static func copy(_ catalog: SalvageCatalog, into w: WriteTransaction, newestVersion: UInt64) throws(CoveError) -> SalvageReport {
        let run = Salvage(catalog, TransactionPages(.write(w)))
        do throws(StorageError) {
            try run.readAreas()
            try run.findSurvivors()
            w.catalog = try run.writeTables()
        } catch {
            throw CoveError(error)
        }
        let store = ObjectStore(pages: run.target, schema: run.schema)
        try store.rebuildIndexes()
        w.catalog = try store.flush()
        var report = SalvageReport(version: catalog.pages.version, newestVersion: newestVersion)
        report.catalogPages = Array(Set(catalog.lost.map(\.page))).sorted()
        for cls in run.schema.classes {
            guard let key = cls.classKey, var r = run.reports[key] else { continue }
            r.damagedPages = (run.pages[key] ?? []).sorted()
            report.classes.append(r)
        }
        return report
    }

    private init(_ catalog: SalvageCatalog, _ target: TransactionPages) {
        self.catalog = catalog
        source = catalog.pages
        self.target = target
        schema = catalog.schema
        for cls in schema.classes {
            if let key = cls.classKey { reports[key] = SalvageClassReport(className: cls.className) }
        }
    }

    private func note(_ lost: LostPage, _ classKey: UInt32) {
        pages[classKey, default: []].insert(lost.page)
    }

    /// Reads every collection area into `areaEntries`.
    private func readAreas() throws(StorageError) {
        for (classKey, root) in catalog.areas {
            var entries: [[UInt8]: [UInt8]] = [:]
            try BTree(store: source, root: root, keyKind: .bytes).salvageEach({ (key, value) throws(StorageError) in
                if case .bytes(let k) = key { entries[k] = value }
            }, lost: { self.note($0, classKey) })
            areaEntries[classKey] = entries
        }
    }

    /// The table entry of `cls`, if it could be read.
    private func entry(_ cls: ObjectSchema) -> TableEntry? {
        guard let key = cls.classKey, let bytes = catalog.tables[key] else { return nil }
        return bytes.withUnsafeBytes { b in try? TableEntry.decode(b) }
    }

    /// Each column of `entry` with the property of `cls` stored in it (nil: none).
    private static func properties(_ cls: ObjectSchema, _ entry: TableEntry) -> [Property?] {
        entry.columns.map { c in cls.properties.first { $0.key == c.property && !$0.isBacklinks } }
    }

    /// The class key of the class a link property points at.
    private func targetClassKey(_ p: Property) -> UInt32? {
        p.type.objectClassName.flatMap { schema[$0]?.classKey }
    }

    // MARK: Which objects survive

    /// An object of a class, for the links between parents and their embedded objects.
    private struct ObjectID: Hashable {
        var classKey: UInt32
        var objectKey: Int64
    }

    /// Fills `alive`: every object whose row can be read (and, with a primary key, whose key can),
    /// less the embedded objects no surviving parent holds.
    private func findSurvivors() throws(StorageError) {
        var children: [ObjectID: [ObjectID]] = [:]
        var roots: [ObjectID] = []
        for cls in schema.classes {
            guard let classKey = cls.classKey, let entry = entry(cls) else { continue }
            let properties = Self.properties(cls, entry)
            let primaryKey = properties.firstIndex { $0?.isPrimaryKey == true }
            // Columns whose links name embedded objects: the parents' side of ownership.
            let owning = properties.indices.filter { c in
                properties[c].flatMap { $0.type.objectClassName }.flatMap { schema[$0]?.isEmbedded } == true
            }
            var present = Set<Int64>()
            try table(entry, classKey).salvageClusters({ (view) throws(StorageError) in
                for i in 0..<view.count {
                    let key = Int64(bitPattern: view.key(i))
                    if let c = primaryKey {
                        do throws(StorageError) { _ = try view.value(c, i) } catch {
                            note(source.lost(error, entries: 1), classKey)
                            continue
                        }
                    }
                    present.insert(key)
                    let me = ObjectID(classKey: classKey, objectKey: key)
                    if !cls.isEmbedded { roots.append(me) }
                    for c in owning {
                        guard let p = properties[c], let target = targetClassKey(p) else { continue }
                        for link in try heldLinks(view, c, i, p, entry.columns[c].spec, key, classKey) {
                            children[me, default: []].append(ObjectID(classKey: target, objectKey: link))
                        }
                    }
                }
            }, lost: { self.note($0, classKey) })
            alive[classKey] = cls.isEmbedded ? [] : present
            if cls.isEmbedded { embeddedPresent[classKey] = present }
        }
        // An embedded object survives when a surviving parent holds it.
        var queue = roots
        while let parent = queue.popLast() {
            for child in children[parent] ?? [] where embeddedPresent[child.classKey]?.contains(child.objectKey) == true {
                if alive[child.classKey, default: []].insert(child.objectKey).inserted { queue.append(child) }
            }
        }
    }

    /// The embedded objects whose rows could be read, by class key.
    private var embeddedPresent: [UInt32: Set<Int64>] = [:]

    private func table(_ entry: TableEntry, _ classKey: UInt32) -> ClusterTree<SalvagePages> {
        ClusterTree(store: source, root: entry.root, columns: entry.columns.map(\.spec))
    }

    /// The object keys the link property `p` in column `c` of object `i` of `view` holds, as far
    /// as they can be read.
    private func heldLinks(_ view: ClusterView, _ c: Int, _ i: Int, _ p: Property, _ spec: ColumnSpec,
                           _ key: Int64, _ classKey: UInt32) throws(StorageError) -> [Int64] {
        if p.collection == .none {
            guard case .link(let k)? = try? view.value(c, i) else { return [] }
            return [Int64(bitPattern: k)]
        }
        let elements = try readCollection((try? view.value(c, i)), spec, p, key, classKey).entries
        return elements.compactMap { entry in
            guard case .link(let l)? = try? Value.decodeMixed(entry.value) else { return nil }
            return l.objectKey
        }
    }

    private func isAlive(_ link: ObjectLink) -> Bool {
        alive[link.classKey]?.contains(link.objectKey) == true
    }

    // MARK: Reading collections

    /// The elements of a collection cell (nil: the cell could not be read), as far as they can
    /// be read, and whether some could not.
    private func readCollection(_ cell: CellValue?, _ spec: ColumnSpec, _ p: Property, _ objectKey: Int64,
                                _ classKey: UInt32) throws(StorageError) -> (entries: [(key: [UInt8], value: [UInt8])], damaged: Bool) {
        guard let cell else { return ([], true) }
        let keyed = p.collection != .list
        var inline: InlineCollection?
        var tree: TreeRoot?
        switch cell {
        case .null:
            return ([], false)
        case .root(let root) where root.isInline:
            guard let bytes = areaEntries[classKey]?[ObjectStore.inlineKey(objectKey, p)] else { return ([], true) }
            inline = try? InlineCollection(bytes: bytes, count: Int(root.count), keyed: keyed)
        case .root(let root):
            if root.page.isNone { return ([], false) }
            tree = root
        case .bytes(let b):
            switch b.withUnsafeBytes({ ObjectStore.rawCell(bytes: $0) }) {
            case .empty: return ([], false)
            case .tree(let root): tree = root
            case .inline(let count, let elements): inline = try? InlineCollection(bytes: elements, count: count, keyed: keyed)
            case .malformed: return ([], true)
            }
        default:
            return ([], true)
        }
        var entries: [(key: [UInt8], value: [UInt8])] = []
        if let inline {
            try inline.forEach { (k, v) in
                entries.append((Array(k), Array(v)))
                return true
            }
            return (entries, false)
        }
        guard let tree else { return ([], true) }
        var damaged = false
        try BTree(store: source, root: tree, keyKind: keyed ? .bytes : .u64).salvageEach({ (key, value) throws(StorageError) in
            if case .bytes(let k) = key { entries.append((k, value)) } else { entries.append(([], value)) }
        }, lost: { lost in
            damaged = true
            self.note(lost, classKey)
        })
        return (entries, damaged)
    }

    // MARK: Writing

    /// Writes every class's table (the objects that survive, with what of them can be read),
    /// collection area and the schema record into a new catalog; returns its root.
    private func writeTables() throws(StorageError) -> TreeRoot {
        var newCatalog = BTree(store: target, root: .empty, keyKind: .bytes)
        _ = try newCatalog.put(CatalogKey.schema, catalog.schemaRecord)
        for cls in schema.classes {
            guard let classKey = cls.classKey else { continue }
            var area = BTree(store: target, root: .empty, keyKind: .bytes)
            let readable = entry(cls)
            var entry = readable ?? TableEntry(root: .empty, nextObjectKey: 0, columns: ObjectStore.columns(of: cls))
            if let readable {
                entry.root = try copyTable(cls, classKey, readable, &area)
            } else if catalog.tables[classKey] != nil || !catalog.lost.isEmpty {
                // The entry is damaged, or may have been on a catalog page that was lost.
                reports[classKey]?.objectsLost = nil
            }
            entry.openRange = nil
            try entry.withEncoded { (b) throws(StorageError) in _ = try newCatalog.put(CatalogKey.table(classKey), b) }
            if !area.root.page.isNone {
                var bytes = [UInt8](repeating: 0, count: TreeRoot.encodedSize)
                bytes.withUnsafeMutableBytes { area.root.encode(into: $0.baseAddress!) }
                _ = try newCatalog.put(CatalogKey.collections(classKey), bytes)
            }
        }
        return newCatalog.root
    }

    /// Copies the surviving objects of `cls` into a new table; returns its root.
    private func copyTable(_ cls: ObjectSchema, _ classKey: UInt32, _ entry: TableEntry,
                           _ area: inout BTree<TransactionPages>) throws(StorageError) -> TableRoot {
        let specs = entry.columns.map(\.spec)
        let properties = Self.properties(cls, entry)
        let survivors = alive[classKey] ?? []
        var copy = ClusterTree(store: target, root: .empty, columns: specs)
        var batch = ClusterBatch(specs: specs)
        var row = [CellValue](repeating: .null, count: specs.count)
        try table(entry, classKey).salvageClusters({ (view) throws(StorageError) in
            for i in 0..<view.count {
                let key = Int64(bitPattern: view.key(i))
                guard survivors.contains(key) else { continue }
                for c in 0..<specs.count {
                    row[c] = try copyCell(view, c, i, properties[c], specs[c], key, classKey, &area)
                }
                try batch.append(view.key(i), row)
                if batch.count == Self.batchRows { try copy.append(&batch) }
            }
        }, lost: { _ in })
        try copy.append(&batch)
        reports[classKey]?.objectsCopied = Int(copy.root.objectCount)
        reports[classKey]?.objectsLost = Int(entry.root.objectCount > copy.root.objectCount ? entry.root.objectCount - copy.root.objectCount : 0)
        return copy.root
    }

    /// The cell of column `c` of object `i` as the new file stores it: read (its default when it
    /// cannot be), links to lost objects taken out, a collection rebuilt from what of it can be
    /// read.
    private func copyCell(_ view: ClusterView, _ c: Int, _ i: Int, _ p: Property?, _ spec: ColumnSpec,
                          _ key: Int64, _ classKey: UInt32, _ area: inout BTree<TransactionPages>) throws(StorageError) -> CellValue {
        let isCollection = spec.kind == .collection || spec.kind == .collectionInRow
        var read: CellValue?
        do throws(StorageError) { read = try view.value(c, i) } catch {
            note(source.lost(error, entries: 1), classKey)
        }
        guard let p else { return isCollection ? spec.defaultValue : read ?? spec.defaultValue }
        if isCollection {
            return try copyCollection(read, spec, p, key, classKey, &area)
        }
        guard let cell = read else {
            reports[classKey]?.valuesLost += 1
            return spec.defaultValue
        }
        if p.isLink, case .link(let k) = cell, let target = targetClassKey(p),
           !isAlive(ObjectLink(classKey: target, objectKey: Int64(bitPattern: k))) {
            reports[classKey]?.linksDropped += 1
            return .null
        }
        if p.type == .mixed, case .bytes(let b) = cell {
            guard let value = try? Value.decodeMixed(b) else {
                reports[classKey]?.valuesLost += 1
                return .null
            }
            let (kept, dropped) = keepingLiveLinks(value)
            if dropped > 0 {
                reports[classKey]?.linksDropped += dropped
                return .bytes(kept.encodeMixed())
            }
        }
        return cell
    }

    /// `value` with every link to a lost object inside it replaced by null, and how many.
    private func keepingLiveLinks(_ value: Value) -> (Value, Int) {
        var dropped = 0
        func keep(_ v: Value) -> Value {
            switch v {
            case .link(let l) where !isAlive(l):
                dropped += 1
                return .null
            case .list(let elements): return .list(elements.map(keep))
            case .dictionary(let entries): return .dictionary(entries.mapValues(keep))
            default: return v
            }
        }
        let kept = keep(value)
        return (kept, dropped)
    }

    /// The cell naming the collection rebuilt from what of `cell`'s collection can be read, with
    /// links to lost objects taken out as deleting them would: a list of links and a set lose
    /// the element, a list of mixed values and a map null the link.
    private func copyCollection(_ cell: CellValue?, _ spec: ColumnSpec, _ p: Property, _ key: Int64, _ classKey: UInt32,
                                _ area: inout BTree<TransactionPages>) throws(StorageError) -> CellValue {
        var (entries, damaged) = try readCollection(cell, spec, p, key, classKey)
        var out = InlineCollection(keyed: p.collection != .list)
        for (k, v) in entries {
            if p.isLink || p.type == .mixed {
                guard let value = try? Value.decodeMixed(v) else {
                    damaged = true
                    continue
                }
                let (kept, dropped) = keepingLiveLinks(value)
                if dropped > 0 {
                    reports[classKey]?.linksDropped += dropped
                    if p.collection == .set || (p.collection == .list && p.isLink) { continue }
                    out.append(key: p.collection == .list ? nil : k, mixed: kept)
                    continue
                }
            }
            k.withUnsafeBytes { kb in v.withUnsafeBytes { vb in out.append(key: kb, vb) } }
        }
        if damaged { reports[classKey]?.collectionsDamaged += 1 }
        let inRow = spec.kind == .collectionInRow
        if out.count == 0 { return inRow ? .null : .root(.empty) }
        let kind = p.collection
        if inRow {
            if out.bytes.count <= InlineCollection.rowLimit { return ObjectStore.rowValue(.row(out)) }
            return ObjectStore.rowValue(.tree(try StoredCollection.tree(from: out, kind: kind, store: target).root))
        }
        if out.bytes.count <= InlineCollection.limit && ObjectStore.mayBeInline(p) {
            try ObjectStore.putInline(&area, key, p, out.bytes)
            return .root(.inline(count: out.count))
        }
        return .root(try StoredCollection.tree(from: out, kind: kind, store: target).root)
    }
}
