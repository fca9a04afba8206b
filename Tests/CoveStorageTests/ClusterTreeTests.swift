// Tables against an in-memory model: randomized inserts, removes, sets and reads of rows with
// every column kind, verify() after every step, commits with old roots re-read later
// (copy-on-write), page accounting, schema changes mid-way, column scans and damaged pages.
// Seeds are fixed and appear in every failure message.
import XCTest
@testable import CoveStorage
import CoveStorageTesting

final class ClusterTreeTests: XCTestCase {
    static let schema: [ColumnSpec] = [
        ColumnSpec(.bool), ColumnSpec(.int), ColumnSpec(.float, nullable: true), ColumnSpec(.double),
        ColumnSpec(.timestamp, nullable: true), ColumnSpec(.decimal128), ColumnSpec(.objectId, nullable: true),
        ColumnSpec(.uuid), ColumnSpec(.link, nullable: true), ColumnSpec(.string), ColumnSpec(.binary, nullable: true),
        ColumnSpec(.mixed), ColumnSpec(.collection), ColumnSpec(.int, nullable: true), ColumnSpec(.string, nullable: true),
        ColumnSpec(.bool, nullable: true), ColumnSpec(.collectionInRow, nullable: true),
    ]

    static func randomBytes(_ rng: inout SeededRandom) -> [UInt8] {
        let roll = rng.below(1000)
        let n = roll < 600 ? rng.below(12) : roll < 900 ? rng.below(200) : roll < 990 ? rng.below(3000) : rng.below(100_001)
        return rng.bytes(n)
    }

    static func randomValue(_ spec: ColumnSpec, _ rng: inout SeededRandom) -> CellValue {
        if spec.nullable && rng.below(5) == 0 { return .null }
        switch spec.kind {
        case .bool: return .bool(rng.below(2) == 0)
        case .int:
            switch rng.below(4) {
            case 0: return .int(Int64(rng.below(200)))
            case 1: return .int(Int64(rng.below(60_000)) - 30_000)
            case 2: return .int(Int64(bitPattern: rng.next()))
            default: return .int(Int64(rng.below(3)) * 1_000_000_007)
            }
        case .float: return .float(Float(rng.below(10_000)) / 7)
        case .double: return .double(Double(bitPattern: rng.next() & 0x7FEF_FFFF_FFFF_FFFF))
        case .timestamp: return .timestamp(seconds: Int64(bitPattern: rng.next()), nanoseconds: Int32(rng.below(1_000_000_000)))
        case .decimal128, .uuid: return .bytes16(rng.next(), rng.next())
        case .objectId: return .bytes12(rng.next(), UInt32(truncatingIfNeeded: rng.next()))
        case .link: return .link(rng.next() >> 8)
        case .string, .binary, .mixed, .collectionInRow: return .bytes(randomBytes(&rng))
        case .collection: return .root(TreeRoot(page: PageRef(pgno: rng.next() >> 20, version: UInt64(rng.below(99))), count: UInt64(rng.below(9))))
        }
    }

    static func randomRow(_ specs: [ColumnSpec], _ rng: inout SeededRandom) -> [CellValue] {
        specs.map { randomValue($0, &rng) }
    }

    /// What the table should hold.
    struct Model {
        var rows: [UInt64: [CellValue]] = [:]
        var sortedKeys: [UInt64] { rows.keys.sorted() }
    }

    func assertNoLeak(_ table: ClusterTree<MemoryPageStore>, _ store: MemoryPageStore, _ context: String,
                      file: StaticString = #filePath, line: UInt = #line) throws {
        var pages = Set<PageNumber>()
        try table.forEachPage { pgno in
            XCTAssertTrue(pages.insert(pgno).inserted, "page \(pgno) visited twice (\(context))", file: file, line: line)
        }
        XCTAssertEqual(pages.count, store.livePageCount, "reachable pages vs live pages (\(context))", file: file, line: line)
        XCTAssertEqual(pages.count + store.freePageCount, store.pageCount, "reachable + free == all (\(context))", file: file, line: line)
    }

    func assertMatches(_ table: ClusterTree<MemoryPageStore>, _ model: Model, _ context: String,
                       file: StaticString = #filePath, line: UInt = #line) throws {
        let keys = model.sortedKeys
        XCTAssertEqual(table.count, UInt64(keys.count), "count (\(context))", file: file, line: line)
        var scanned: [UInt64] = []
        try table.forEachKey(from: nil) { scanned.append($0); return true }
        XCTAssertEqual(scanned, keys, "keys (\(context))", file: file, line: line)
        for k in keys {
            let row = try table.getRow(k)
            if row != model.rows[k] {
                XCTFail("row \(k) differs (\(context))", file: file, line: line)
                return
            }
        }
        XCTAssertEqual(try table.lastKey(), keys.last, "lastKey (\(context))", file: file, line: line)
        // Column scans through the cluster views.
        var position = 0
        var ints: [Int64] = []
        var doubles: [Double] = []
        var nulls: [Bool] = []
        let specs = table.columns
        try table.forEachCluster { (view: ClusterView) throws(StorageError) -> Bool in
            for j in 0..<specs.count {
                if specs[j].kind == .int { view.ints(j, into: &ints) }
                if specs[j].kind == .double { view.doubles(j, into: &doubles) }
                view.nulls(j, into: &nulls)
                for i in 0..<view.count {
                    let expected = model.rows[keys[position + i]]![j]
                    XCTAssertEqual(nulls[i], expected == .null, "null flag of column \(j) (\(context))", file: file, line: line)
                    switch expected {
                    case .int(let x):
                        XCTAssertEqual(ints[i], x, file: file, line: line)
                        XCTAssertEqual(view.int(j, i), x, file: file, line: line)
                    case .double(let x):
                        XCTAssertEqual(doubles[i].bitPattern, x.bitPattern, file: file, line: line)
                    case .bool(let x): XCTAssertEqual(view.bool(j, i), x, file: file, line: line)
                    case .bytes(let b):
                        try view.withBytes(j, i) { XCTAssertEqual($0.map(Array.init), b, "bytes of column \(j) (\(context))", file: file, line: line) }
                        XCTAssertEqual(try view.byteCount(j, i), b.count, file: file, line: line)
                    default:
                        XCTAssertEqual(try view.value(j, i), expected, "column \(j) (\(context))", file: file, line: line)
                    }
                }
            }
            for i in 0..<view.count { XCTAssertEqual(view.key(i), keys[position + i], file: file, line: line) }
            position += view.count
            return true
        }
        XCTAssertEqual(position, keys.count, "objects scanned (\(context))", file: file, line: line)
    }

    func runRandomized(seed: UInt64, steps: Int, universe: Int, file: StaticString = #filePath, line: UInt = #line) throws {
        var rng = SeededRandom(seed: seed)
        let store = MemoryPageStore()
        var table = ClusterTree(store: store, root: .empty, columns: Self.schema)
        var model = Model()
        var snapshots: [(version: UInt64, root: TableRoot, columns: [ColumnSpec], model: Model)] = []
        var nextAppend = UInt64(universe)
        var maxClusters: UInt64 = 0
        for step in 0..<steps {
            let context = "seed \(seed) step \(step)"
            // Sorted: a dictionary's order changes with each process's hash seed, and the run
            // must be the seed's alone.
            let keys = model.sortedKeys
            let growth = step < steps / 2 ? 60 : 30
            let roll = rng.below(100)
            do {
                if roll < growth {
                    let key: UInt64
                    if rng.below(3) == 0 { key = nextAppend; nextAppend += UInt64(1 + rng.below(3)) } else { key = UInt64(rng.below(universe)) }
                    let row = Self.randomRow(table.columns, &rng)
                    if model.rows[key] != nil {
                        XCTAssertThrowsError(try table.insert(key, row), "duplicate insert of \(key) (\(context))", file: file, line: line)
                    } else {
                        try table.insert(key, row)
                        model.rows[key] = row
                    }
                } else if roll < growth + 25 {
                    let key = keys.isEmpty || rng.below(5) == 0 ? UInt64(rng.below(universe)) : keys.randomElement(using: &rng)!
                    if rng.below(2) == 0, let location = try table.locate(key) {
                        // Where `locate` found it (the table not edited since).
                        try table.remove(at: location)
                        XCTAssertNotNil(model.rows.removeValue(forKey: key), "remove(at:) \(key) (\(context))", file: file, line: line)
                    } else {
                        XCTAssertEqual(try table.remove(key), model.rows.removeValue(forKey: key) != nil, "remove \(key) (\(context))", file: file, line: line)
                    }
                } else if roll < 95 {
                    if let key = keys.randomElement(using: &rng) {
                        let j = rng.below(table.columns.count)
                        let value = Self.randomValue(table.columns[j], &rng)
                        try table.set(key, column: j, value)
                        model.rows[key]![j] = value
                        XCTAssertEqual(try table.get(key, column: j), value, "get after set (\(context))", file: file, line: line)
                    }
                } else if roll < 98 {
                    if !keys.isEmpty {
                        let sorted = model.sortedKeys
                        let p = rng.below(sorted.count)
                        XCTAssertEqual(try table.key(at: UInt64(p)), sorted[p], "key(at: \(p)) (\(context))", file: file, line: line)
                        let from = UInt64(rng.below(universe))
                        var got: [UInt64] = []
                        try table.forEachKey(from: from) { got.append($0); return got.count < 5 }
                        XCTAssertEqual(got, Array(sorted.filter { $0 >= from }.prefix(5)), "forEachKey(from: \(from)) (\(context))", file: file, line: line)
                    }
                } else if rng.below(2) == 0 || table.columns.count < 4 {
                    let spec = ColumnSpec(ColumnKind(rawValue: UInt8(1 + rng.below(13)))!, nullable: rng.below(2) == 0)
                    try table.addColumn(spec)
                    for k in model.rows.keys { model.rows[k]!.append(spec.defaultValue) }
                } else {
                    let j = rng.below(table.columns.count)
                    try table.removeColumn(j)
                    for k in model.rows.keys { model.rows[k]!.remove(at: j) }
                }
                try table.verify()
                let k = UInt64(rng.below(universe))
                XCTAssertEqual(try table.contains(k), model.rows[k] != nil, "contains \(k) (\(context))", file: file, line: line)
                if let row = model.rows[k] {
                    let j = rng.below(row.count)
                    XCTAssertEqual(try table.get(k, column: j), row[j], "get \(k) column \(j) (\(context))", file: file, line: line)
                    if table.columns[j].kind.isBytes {
                        try table.withBytes(k, column: j) { bytes in
                            if case .bytes(let b) = row[j] { XCTAssertEqual(bytes.map(Array.init), b, file: file, line: line) } else { XCTAssertNil(bytes, file: file, line: line) }
                        }
                    }
                } else {
                    XCTAssertNil(try table.getRow(k), file: file, line: line)
                    XCTAssertThrowsError(try table.get(k, column: 0), file: file, line: line)
                }
            } catch {
                XCTFail("\(error) (\(context))", file: file, line: line)
                return
            }
            maxClusters = max(maxClusters, table.root.clusters.count)
            if step % 40 == 39 {
                store.commit()
                try assertNoLeak(table, store, context, file: file, line: line)
                if snapshots.count < 3 && rng.below(2) == 0 {
                    store.pin(store.committedVersion)
                    snapshots.append((store.committedVersion, table.root, table.columns, model))
                } else if !snapshots.isEmpty {
                    let old = snapshots.removeFirst()
                    let reader = ClusterTree(store: store, root: old.root, columns: old.columns)
                    do {
                        try reader.verify()
                        try assertMatches(reader, old.model, "snapshot of version \(old.version), \(context)", file: file, line: line)
                    } catch {
                        XCTFail("snapshot of version \(old.version): \(error) (\(context))", file: file, line: line)
                    }
                    store.unpin(old.version)
                }
            }
            if step % 150 == 0 { try assertMatches(table, model, context, file: file, line: line) }
        }
        XCTAssertGreaterThan(maxClusters, 20, "tables should span many clusters (seed \(seed)): \(maxClusters)", file: file, line: line)
        try assertMatches(table, model, "seed \(seed) end", file: file, line: line)

        // Drain in random order: every page must come back.
        var remaining = model.sortedKeys
        for i in stride(from: remaining.count - 1, to: 0, by: -1) { remaining.swapAt(i, rng.below(i + 1)) }
        for (n, key) in remaining.prefix(remaining.count / 2).enumerated() {
            XCTAssertTrue(try table.remove(key), "draining \(key) (seed \(seed))", file: file, line: line)
            model.rows[key] = nil
            if n % 5 == 0 { try table.verify() }
        }
        try assertMatches(table, model, "seed \(seed) half drained", file: file, line: line)
        try table.removeAll()
        XCTAssertEqual(table.root, TableRoot.empty, file: file, line: line)
        for old in snapshots { store.unpin(old.version) }
        store.commit()
        XCTAssertEqual(store.livePageCount, 0, "pages left after removeAll (seed \(seed))", file: file, line: line)
    }

    func testRandomized() throws {
        for seed: UInt64 in [11, 12, 13] {
            try runRandomized(seed: seed, steps: 1500, universe: 1500)
        }
    }

    func testSequentialAppendsPackPages() throws {
        let store = MemoryPageStore()
        var table = ClusterTree(store: store, root: .empty, columns: [ColumnSpec(.int), ColumnSpec(.double)])
        for k in 0..<5000 as Range<UInt64> { try table.insert(k, [.int(Int64(k) * 3), .double(Double(k))]) }
        try table.verify()
        // 16 bytes per object, the int column in 16-bit frame of reference: ~200 per page.
        XCTAssertLessThan(table.root.clusters.count, 5000 / 150, "appends should leave full clusters")
        var total: Int64 = 0
        var ints: [Int64] = []
        try table.forEachCluster { (view: ClusterView) throws(StorageError) -> Bool in
            view.ints(0, into: &ints)
            for x in ints { total += x }
            return true
        }
        XCTAssertEqual(total, (0..<5000).reduce(0) { $0 + Int64($1) * 3 })
        // Requesting pages ahead changes nothing that is seen: the same clusters in the same
        // order, and a scan that stops after k clusters sees exactly k.
        func clusters(_ plan: ClusterPrefetch, stopAfter limit: Int = .max) throws -> [[UInt64]] {
            var seen: [[UInt64]] = []
            try table.forEachCluster(prefetching: plan) { (view: ClusterView) throws(StorageError) -> Bool in
                seen.append((0..<view.count).map { view.key($0) })
                return seen.count < limit
            }
            return seen
        }
        let plain = try clusters(.nothing)
        XCTAssertGreaterThan(plain.count, 5)
        XCTAssertEqual(try clusters(ClusterPrefetch(columns: [0, 1], keys: true)), plain)
        XCTAssertEqual(try clusters(ClusterPrefetch(columns: [1])), plain)
        for k in [1, 2, 3, 4, 5, plain.count - 1] {
            XCTAssertEqual(try clusters(ClusterPrefetch(columns: [0]), stopAfter: k), Array(plain.prefix(k)), "stop after \(k)")
        }
        var matches: [UInt64] = []
        try table.forEachCluster { (view: ClusterView) throws(StorageError) -> Bool in
            try view.forEachIntEqual(0, 2997) { matches.append(view.key($0)) }
            return true
        }
        XCTAssertEqual(matches, [999])
        XCTAssertEqual(try table.key(at: 4321), 4321)
    }

    /// Finding a key in a cluster starts from the window that distinct ascending keys leave
    /// (one slot when they are consecutive): every key around clusters that are dense, dense
    /// with one gap, sparse, or thinned by removals is found exactly when it is there.
    func testLookupsInDenseAndSparseClusters() throws {
        let store = MemoryPageStore()
        var table = ClusterTree(store: store, root: .empty, columns: [ColumnSpec(.int)])
        var keys: [UInt64] = []
        var k: UInt64 = 3
        var rng = SeededRandom(seed: 41)
        for run in 0..<40 {
            for _ in 0..<(1 + rng.below(300)) {
                keys.append(k)
                k += run % 3 == 0 ? 1 : UInt64(1 + rng.below(run % 3 == 1 ? 2 : 50))
            }
            k += UInt64(rng.below(3) * 1000)
        }
        try table.append(keys.map { (key: $0, values: [CellValue.int(Int64($0))]) })
        var present = Set(keys)
        for key in keys where rng.below(7) == 0 {
            XCTAssertTrue(try table.remove(key))
            present.remove(key)
        }
        try table.verify()
        for key in 0...(k + 2) {
            let found = try table.locate(key)
            XCTAssertEqual(found != nil, present.contains(key), "key \(key)")
            if let found { XCTAssertEqual(try table.get(found, column: 0), .int(Int64(key))) }
        }
        // Near the last location found: in key order (mostly the same cluster), and at random
        // (mostly another), present and absent keys answer as a descent does.
        var near: ClusterLocation?
        let order = Array(0...(k + 2)) + (0..<20_000).map { _ in UInt64(rng.below(Int(k) + 3)) }
        for key in order {
            let found = try table.locate(key, near: near)
            XCTAssertEqual(found != nil, present.contains(key), "key \(key) near \(near?.key ?? 0)")
            if let found {
                XCTAssertEqual(found.key, key)
                XCTAssertEqual(try table.get(found, column: 0), .int(Int64(key)))
                near = found
            }
        }
    }

    /// Keys are written stepped, at the narrowest delta width their gaps allow, and pages of
    /// plain 8-byte keys (as files written before stepped keys hold) still read and verify,
    /// and are written stepped when edited.
    func testKeyEncodings() throws {
        // The widths and their largest deltas, both ways.
        for w in [0, 1, 2, 4, 8] {
            XCTAssertEqual(ClusterLayout.deltaWidth(ClusterLayout.maxDelta(width: w)), w)
            if w < 8 { XCTAssertGreaterThan(ClusterLayout.deltaWidth(ClusterLayout.maxDelta(width: w) + 1), w) }
        }
        // Consecutive keys (gap 1) keep one byte of deltas, all 0, for removals in place.
        for (gap, width) in [(UInt64(1), 1), (2, 2), (300, 4), (1 << 20, 4), (1 << 40, 8)] {
            let store = MemoryPageStore()
            var table = ClusterTree(store: store, root: .empty, columns: [ColumnSpec(.int), ColumnSpec(.string)])
            let keys = (0..<2000 as Range<UInt64>).map { 7 + $0 * gap }
            try table.append(keys.map { (key: $0, values: [.int(Int64(bitPattern: $0)), .bytes(Array("k\($0)".utf8))]) })
            store.commit()
            try table.verify()
            var pages: [PageNumber] = []
            try table.index.forEach(from: nil) { (k: UInt64, v: UnsafeRawBufferPointer) throws(StorageError) -> Bool in
                pages.append(try ClusterRef(key: k, v).page.pgno)
                return true
            }
            let first = try store.page(pages[0])
            XCTAssertEqual(first.load(fromByteOffset: ClusterLayout.keyEncodingOffset, as: UInt8.self), ClusterLayout.steppedKeys)
            // Deltas grow by gap - 1 per object: the last one sets the width.
            let n = UInt64(try ClusterLeaf(first, pgno: pages[0], specs: table.specs).count)
            XCTAssertEqual(Int(first.load(fromByteOffset: ClusterLayout.keyWidthOffset, as: UInt8.self)), width, "gap \(gap)")
            XCTAssertEqual(width, ClusterLayout.keyDeltaWidth((n - 1) * (gap - 1)), "gap \(gap)")
            // A full page of consecutive keys gives up an object in place.
            if gap == 1 { XCTAssertTrue(try ClusterLeaf(first, pgno: pages[0], specs: table.specs).canRemoveInPlace(1, specs: table.specs)) }
            func checkAll(_ present: Set<UInt64>) throws {
                try table.verify()
                for k in keys {
                    let at = try table.locate(k)
                    XCTAssertEqual(at != nil, present.contains(k), "gap \(gap) key \(k)")
                    if at != nil { XCTAssertEqual(try table.get(k, column: 0), .int(Int64(bitPattern: k))) }
                    if gap > 1 { XCTAssertNil(try table.locate(k + 1)) }
                }
            }
            try checkAll(Set(keys))
            // With 8-byte deltas, every page rewritten in the plain form: the n keys where the
            // stepped base and deltas were (8 bytes fewer, so the columns stay where they are).
            guard width == 8 else { continue }
            let c = 2
            for pgno in pages {
                let leaf = try ClusterLeaf(try store.page(pgno), pgno: pgno, specs: table.specs)
                let plain = (0..<leaf.count).map { leaf.key($0) }
                store.tamper(pgno) { p in
                    for (i, k) in plain.enumerated() {
                        p.storeBytes(of: k.littleEndian, toByteOffset: ClusterLayout.keysOffset(columns: c) + 8 * i, as: UInt64.self)
                    }
                    p.storeBytes(of: ClusterLayout.plainKeys, toByteOffset: ClusterLayout.keyEncodingOffset, as: UInt8.self)
                    p.storeBytes(of: UInt8(0), toByteOffset: ClusterLayout.keyWidthOffset, as: UInt8.self)
                }
            }
            try checkAll(Set(keys))
            // An edit of a plain page writes it stepped again.
            XCTAssertTrue(try table.remove(keys[1]))
            try checkAll(Set(keys).subtracting([keys[1]]))
            var firstRef: ClusterRef?
            try table.index.forEach(from: nil) { (k: UInt64, v: UnsafeRawBufferPointer) throws(StorageError) -> Bool in
                firstRef = try ClusterRef(key: k, v)
                return false
            }
            let edited = try store.page(try XCTUnwrap(firstRef).page.pgno)
            XCTAssertEqual(edited.load(fromByteOffset: ClusterLayout.keyEncodingOffset, as: UInt8.self), ClusterLayout.steppedKeys)
        }
    }

    /// A table filled by `batches` appends of `rows` objects each, made by `row`, with
    /// `gap` between keys; committed after every `commitEvery`-th batch, checked every
    /// `checkEvery`-th.
    struct Appended {
        var rng: SeededRandom
        let store = MemoryPageStore()
        lazy var table = ClusterTree(store: store, root: .empty, columns: ClusterTreeTests.schema)
        var model = Model()
        var next: UInt64 = 5
    }

    func appendBatches(seed: UInt64, batches: Int, rows: (inout SeededRandom) -> Int,
                       row: (inout SeededRandom) -> [CellValue], gap: (inout SeededRandom) -> UInt64,
                       commitEvery: Int, checkEvery: Int) throws -> Appended {
        var t = Appended(rng: SeededRandom(seed: seed))
        for batch in 0..<batches {
            var added: [(key: UInt64, values: [CellValue])] = []
            for _ in 0..<rows(&t.rng) {
                let values = row(&t.rng)
                added.append((t.next, values))
                t.model.rows[t.next] = values
                t.next += gap(&t.rng)
            }
            try t.table.append(added)
            if batch % commitEvery == commitEvery - 1 { t.store.commit() }
            if batch % checkEvery == checkEvery - 1 {
                try t.table.verify()
                try assertNoLeak(t.table, t.store, "batch \(batch)")
            }
        }
        XCTAssertEqual(t.table.count, UInt64(t.model.rows.count))
        return t
    }

    func testBatchAppendsMatchSingleInserts() throws {
        var t = try appendBatches(seed: 77, batches: 12, rows: { 1 + $0.below(400) }, row: { Self.randomRow(Self.schema, &$0) },
                                  gap: { UInt64(1 + $0.below(3)) }, commitEvery: 1000, checkEvery: 1)
        var (rng, table) = (t.rng, t.table)
        let (model, next) = (t.model, t.next)
        for (key, row) in model.rows { XCTAssertEqual(try table.getRow(key), row, "key \(key)") }
        // Keys must follow the table's last and ascend within the batch.
        XCTAssertThrowsError(try table.append([(3, Self.randomRow(Self.schema, &rng))]))
        XCTAssertThrowsError(try table.append([(next + 5, Self.randomRow(Self.schema, &rng)), (next + 1, Self.randomRow(Self.schema, &rng))]))
        XCTAssertThrowsError(try table.append([(next, [.int(1)])]))
        // A value of the wrong kind in a later row: refused, naming its column, before anything
        // of the batch is written.
        var bad = [(key: next, values: Self.randomRow(Self.schema, &rng)), (key: next + 1, values: Self.randomRow(Self.schema, &rng))]
        let j = Self.schema.firstIndex { $0.kind == .double }!
        bad[1].values[j] = .bool(true)
        XCTAssertThrowsError(try table.append(bad)) { XCTAssertTrue("\($0)".contains("column \(j)"), "\($0)") }
        XCTAssertEqual(table.count, UInt64(model.rows.count))
        try table.verify()
    }

    /// A value small enough to stay in the page, mostly near the column's earlier values.
    static func smallValue(_ spec: ColumnSpec, _ rng: inout SeededRandom) -> CellValue {
        switch (spec.kind, rng.below(4)) {
        case (.string, _), (.binary, _), (.mixed, _):
            if spec.nullable && rng.below(5) == 0 { return .null }
            return .bytes(rng.bytes(rng.below(40)))
        case (.int, 0), (.int, 1), (.int, 2):
            if spec.nullable && rng.below(5) == 0 { return .null }
            return .int(100 + Int64(rng.below(150)))
        default:
            return randomValue(spec, &rng)
        }
    }

    /// `ClusterLeaf.appending` against encoding every object again: the same objects whenever
    /// it accepts, and it refuses only what the page's layout cannot take.
    func testAppendingToAPageKeepsItsLayout() throws {
        var rng = SeededRandom(seed: 4242)
        let schemas: [[ColumnSpec]] = [
            Self.schema,
            [ColumnSpec(.int), ColumnSpec(.string), ColumnSpec(.int), ColumnSpec(.double)],
            [ColumnSpec(.int, nullable: true), ColumnSpec(.bool), ColumnSpec(.timestamp), ColumnSpec(.string, nullable: true)],
        ]
        let old = UnsafeMutableRawPointer.allocate(byteCount: pageSize, alignment: 16)
        let new = UnsafeMutableRawPointer.allocate(byteCount: pageSize, alignment: 16)
        defer { old.deallocate(); new.deallocate() }
        var accepted = 0
        var refused = 0
        for round in 0..<600 {
            let specs = schemas[round % schemas.count]
            var rows = ClusterRows(columnCount: specs.count)
            var key = UInt64(rng.below(1000))
            let n = 1 + rng.below(round % 2 == 0 ? 6 : 60)
            let step = rng.below(4) == 0 ? 3 : 1
            for i in 0..<n {
                rows.insert(key: key, row: specs.map { StoredCell.value(Self.smallValue($0, &rng)) }, at: i)
                key += UInt64(1 + rng.below(step))
            }
            guard rows.plan(specs: specs, packLeft: true).count == 1 else { continue }
            try rows.encode(0..<n, specs: specs, into: old)
            let leaf = try ClusterLeaf(UnsafeRawPointer(old), pgno: 7, specs: specs)
            var more = ClusterRows(columnCount: specs.count)
            for i in 0..<(1 + rng.below(3)) {
                key += UInt64(rng.below(3) == 0 ? 1 + rng.below(300) : 0)
                more.insert(key: key, row: specs.map { StoredCell.value(Self.smallValue($0, &rng)) }, at: i)
                key += 1
            }
            let context = "round \(round), \(n) + \(more.count) objects"
            guard leaf.appending(more, specs: specs, into: new) else {
                refused += 1
                continue
            }
            accepted += 1
            var expected = rows
            expected.append(contentsOf: more)
            let grown = try ClusterLeaf(UnsafeRawPointer(new), pgno: 8, specs: specs)
            let got = try ClusterRows(grown, specs: specs)
            XCTAssertEqual(got.keys, expected.keys, context)
            for j in 0..<specs.count { XCTAssertEqual(got.columns[j], expected.columns[j], "column \(j), \(context)") }
            XCTAssertEqual(grown.heapStart, Int(UInt16(littleEndian: new.loadUnaligned(fromByteOffset: ClusterLayout.heapStartOffset, as: UInt16.self))))
        }
        XCTAssertGreaterThan(accepted, 100, "accepted \(accepted), refused \(refused)")
        XCTAssertGreaterThan(refused, 20, "accepted \(accepted), refused \(refused)")
    }

    /// `ClusterLeaf.overwrite` against laying the page out again: whenever `holds` accepts a
    /// value, the page written in place reads back as the objects with that one value changed,
    /// and it refuses what the layout cannot take as it stands.
    func testOneValueWrittenInPlaceReadsBackAsTheEdit() throws {
        var rng = SeededRandom(seed: 5150)
        let specs = Self.schema
        let page = UnsafeMutableRawPointer.allocate(byteCount: pageSize, alignment: 16)
        let copy = UnsafeMutableRawPointer.allocate(byteCount: pageSize, alignment: 16)
        defer { page.deallocate(); copy.deallocate() }
        var accepted = [Int](repeating: 0, count: specs.count)
        var refused = 0
        for round in 0..<400 {
            var rows = ClusterRows(columnCount: specs.count)
            let n = 1 + rng.below(20)
            for i in 0..<n { rows.insert(key: UInt64(10 * i), row: specs.map { StoredCell.value(Self.smallValue($0, &rng)) }, at: i) }
            guard rows.plan(specs: specs, packLeft: true).count == 1 else { continue }
            try rows.encode(0..<n, specs: specs, into: page)
            let leaf = try ClusterLeaf(UnsafeRawPointer(page), pgno: 7, specs: specs)
            for _ in 0..<10 {
                let j = rng.below(specs.count)
                let i = rng.below(n)
                // Values near the old ones too: the same int width, strings of the same length.
                var value = Self.smallValue(specs[j], &rng)
                if case .value(.bytes(let old)) = rows.columns[j][i], rng.below(2) == 0 { value = .bytes(rng.bytes(old.count)) }
                let context = "round \(round), column \(j) (\(specs[j].kind)), object \(i) of \(n), \(value)"
                guard leaf.holds(value, at: j, i, kind: specs[j].kind) else {
                    refused += 1
                    continue
                }
                accepted[j] += 1
                copy.copyMemory(from: page, byteCount: pageSize)
                leaf.overwrite(j, i, with: value, kind: specs[j].kind, in: copy)
                let edited = try ClusterLeaf(UnsafeRawPointer(copy), pgno: 8, specs: specs)
                var expected = rows
                expected.columns[j][i] = .value(value)
                let got = try ClusterRows(edited, specs: specs)
                XCTAssertEqual(got.keys, expected.keys, context)
                for c in 0..<specs.count { XCTAssertEqual(got.columns[c], expected.columns[c], "column \(c), \(context)") }
            }
        }
        for (j, count) in accepted.enumerated() { XCTAssertGreaterThan(count, 20, "column \(j) (\(specs[j].kind)) written in place") }
        XCTAssertGreaterThan(refused, 100, "refused")
    }

    /// `ClusterLeaf.removeInPlace` against laying the page out again: whenever
    /// `canRemoveInPlace` accepts, the page reads back as the objects without the removed one
    /// (keys, every column, nulls), and its heap accounts for the removed bytes as garbage.
    func testObjectsRemovedInPlaceReadBackAsTheRemoval() throws {
        var rng = SeededRandom(seed: 6160)
        let specs = Self.schema
        let page = UnsafeMutableRawPointer.allocate(byteCount: pageSize, alignment: 16)
        defer { page.deallocate() }
        var removed = 0
        var refused = 0
        for round in 0..<300 {
            var rows = ClusterRows(columnCount: specs.count)
            let n = 2 + rng.below(40)
            var key = UInt64(rng.below(100))
            for i in 0..<n {
                rows.insert(key: key, row: specs.map { StoredCell.value(Self.smallValue($0, &rng)) }, at: i)
                key += UInt64(rng.below(3) == 0 ? 1 + rng.below(300) : 1)
            }
            guard rows.plan(specs: specs, packLeft: true).count == 1 else { continue }
            try rows.encode(0..<n, specs: specs, into: page)
            // Several removals in a row on the same page, as deletes in one write make them.
            for step in 0..<(1 + rng.below(8)) {
                let leaf = try ClusterLeaf(UnsafeRawPointer(page), pgno: 7, specs: specs)
                let r = rng.below(leaf.count)
                guard leaf.canRemoveInPlace(r, specs: specs) else {
                    refused += 1
                    break
                }
                removed += 1
                try leaf.removeInPlace(r, specs: specs, into: page)
                _ = rows.remove(at: r)
                let context = "round \(round), step \(step), removed \(r) of \(leaf.count)"
                let after = try ClusterLeaf(UnsafeRawPointer(page), pgno: 7, specs: specs)
                let got = try ClusterRows(after, specs: specs)
                XCTAssertEqual(got.keys, rows.keys, context)
                for c in 0..<specs.count { XCTAssertEqual(got.columns[c], rows.columns[c], "column \(c), \(context)") }
                // Heap: live values and garbage fill it exactly (what verify checks).
                var live = 0
                for c in 0..<specs.count where specs[c].kind.isBytes {
                    for i in 0..<after.count where !after.isNull(c, i) {
                        switch try after.bytesRef(c, i) {
                        case .inline(let b): live += b.count
                        case .overflow: live += ClusterLayout.overflowRefSize
                        }
                    }
                }
                XCTAssertEqual(live + after.u16(ClusterLayout.garbageOffset), pageSize - after.heapStart, context)
            }
        }
        XCTAssertGreaterThan(removed, 150, "removed \(removed), refused \(refused)")
        XCTAssertGreaterThan(refused, 20, "removed \(removed), refused \(refused)")
    }

    /// Deletes in random order in a table, with commits between some: objects removed in place
    /// and laid out again alike read back as the model, verify passes, no page leaks, and a
    /// later edit of a page with heap garbage (a set laid out again, an append) keeps it whole.
    func testDeletesInPlaceKeepTheTableWhole() throws {
        var rng = SeededRandom(seed: 7171)
        let store = MemoryPageStore()
        var table = ClusterTree(store: store, root: .empty, columns: Self.schema)
        var model = Model()
        for k in 0..<2000 {
            let row = Self.schema.map { Self.smallValue($0, &rng) }
            try table.insert(UInt64(k * 2), row)
            model.rows[UInt64(k * 2)] = row
        }
        store.commit()
        var keys = model.sortedKeys
        for step in 0..<1500 {
            let k = keys.remove(at: rng.below(keys.count))
            XCTAssertTrue(try table.remove(k))
            model.rows[k] = nil
            if step % 100 == 99 {
                let target = keys[rng.below(keys.count)]
                let row = Self.schema.map { Self.smallValue($0, &rng) }
                for (c, value) in row.enumerated() { try table.set(target, column: c, value) }
                model.rows[target] = row
                let appended = UInt64(100_000 + step)
                try table.insert(appended, row)
                model.rows[appended] = row
                keys.append(appended)
                try table.verify()
                store.commit()
            }
        }
        try table.verify()
        try assertMatches(table, model, "deletes")
        try assertNoLeak(table, store, "deletes")
    }

    /// A set that the page holds as it stands is written without laying the page out again:
    /// in the page itself when this transaction wrote it, else in a copy that replaces it (the
    /// old page freed). Either way the table reads back the edit, verifies and leaks nothing.
    func testSetsWrittenInPlaceKeepTheTableWhole() throws {
        let store = MemoryPageStore()
        let specs = [ColumnSpec(.int), ColumnSpec(.double, nullable: true), ColumnSpec(.string)]
        var table = ClusterTree(store: store, root: .empty, columns: specs)
        for k in 0..<100 { try table.insert(UInt64(k), [.int(Int64(k)), .double(Double(k)), .bytes(Array("name\(k % 10)".utf8))]) }
        store.commit()
        func page(of key: UInt64) throws -> PageNumber { try XCTUnwrap(try table.cluster(containing: key)).page.pgno }
        let committed = try page(of: 5)
        try table.set(5, column: 0, .int(7))                        // a copy replaces the committed page
        let copied = try page(of: 5)
        XCTAssertNotEqual(copied, committed)
        try table.set(6, column: 1, .null)                           // no null bitmap: laid out again
        let laidOut = try page(of: 6)
        try table.set(7, column: 2, .bytes(Array("NAME7".utf8)))     // same length: in place
        try table.set(8, column: 0, .int(90))                        // within the width: in place
        XCTAssertEqual(try page(of: 8), laidOut)
        try table.set(9, column: 1, .double(-1))                      // in place
        try table.set(6, column: 1, .double(6.5))                     // the bitmap cleared in place
        XCTAssertEqual(try page(of: 9), laidOut)
        try table.set(10, column: 0, .int(1 << 40))                   // past the width: laid out again
        try table.set(11, column: 2, .bytes(Array("longer name".utf8)))
        try table.verify()
        try assertNoLeak(table, store, "sets")
        store.commit()
        try table.verify()
        XCTAssertEqual(try table.getRow(5), [.int(7), .double(5), .bytes(Array("name5".utf8))])
        XCTAssertEqual(try table.getRow(6), [.int(6), .double(6.5), .bytes(Array("name6".utf8))])
        XCTAssertEqual(try table.getRow(7), [.int(7), .double(7), .bytes(Array("NAME7".utf8))])
        XCTAssertEqual(try table.getRow(8), [.int(90), .double(8), .bytes(Array("name8".utf8))])
        XCTAssertEqual(try table.getRow(9), [.int(9), .double(-1), .bytes(Array("name9".utf8))])
        XCTAssertEqual(try table.getRow(10), [.int(1 << 40), .double(10), .bytes(Array("name0".utf8))])
        XCTAssertEqual(try table.getRow(11), [.int(11), .double(11), .bytes(Array("longer name".utf8))])
        try assertNoLeak(table, store, "after commit")
    }

    /// Appends of one to three objects, as single-object write transactions make them, with
    /// commits between some: every object reads back, pages are not leaked, verify() passes.
    func testSmallAppendsMatchTheModel() throws {
        var t = try appendBatches(
            seed: 9191, batches: 700, rows: { 1 + $0.below(3) },
            row: { rng in rng.below(20) == 0 ? Self.randomRow(Self.schema, &rng) : Self.schema.map { Self.smallValue($0, &rng) } },
            gap: { UInt64($0.below(10) == 0 ? 2 + $0.below(1000) : 1) }, commitEvery: 3, checkEvery: 50)
        try t.table.verify()
        try assertMatches(t.table, t.model, "small appends")
    }

    func testWrongValuesAreRejected() throws {
        let store = MemoryPageStore()
        var table = ClusterTree(store: store, root: .empty, columns: [ColumnSpec(.int), ColumnSpec(.string, nullable: true)])
        XCTAssertThrowsError(try table.insert(1, [.null, .null])) { error in
            XCTAssertTrue("\(error)".contains("column 0"), "\(error)")
        }
        XCTAssertThrowsError(try table.insert(1, [.int(1), .int(2)])) { error in
            XCTAssertTrue("\(error)".contains("column 1"), "\(error)")
        }
        XCTAssertThrowsError(try table.insert(1, [.int(1)]))
        try table.insert(1, [.int(1), .null])
        XCTAssertThrowsError(try table.insert(1, [.int(1), .null]))
        XCTAssertThrowsError(try table.set(2, column: 0, .int(1)))
        XCTAssertThrowsError(try table.set(1, column: 0, .bool(true)))
        XCTAssertThrowsError(try table.get(1, column: 2))
        try table.verify()
    }

    func testDamagedPagesAreReportedAsCorrupt() throws {
        let store = MemoryPageStore()
        var table = ClusterTree(store: store, root: .empty, columns: [ColumnSpec(.int), ColumnSpec(.string), ColumnSpec(.binary, nullable: true)])
        var rng = SeededRandom(seed: 99)
        for k in 0..<600 as Range<UInt64> {
            try table.insert(k, [.int(Int64(k)), .bytes(rng.bytes(rng.below(60))), k % 50 == 0 ? .bytes(rng.bytes(5000)) : .null])
        }
        store.commit()
        var clusterPages: [PageNumber] = []
        try table.index.forEach(from: nil) { (k: UInt64, v: UnsafeRawBufferPointer) throws(StorageError) -> Bool in
            clusterPages.append(try ClusterRef(key: k, v).page.pgno)
            return true
        }
        let victim = clusterPages[clusterPages.count / 2]
        let original = [UInt8](UnsafeRawBufferPointer(start: try store.page(victim), count: pageSize))
        func restore() {
            store.tamper(victim) { p in original.withUnsafeBytes { p.copyMemory(from: $0.baseAddress!, byteCount: pageSize) } }
        }
        func expectCorrupt(_ what: String, _ edit: (UnsafeMutableRawPointer) -> Void) {
            store.tamper(victim, edit)
            var sawCorrupt = false
            do {
                try table.verify()
            } catch let error {
                if case .corrupt = error { sawCorrupt = true }
            }
            XCTAssertTrue(sawCorrupt, "verify after \(what)")
            // Reads must fail cleanly or succeed, never crash.
            for k in 0..<600 as Range<UInt64> {
                _ = try? table.getRow(k)
                _ = try? table.withBytes(k, column: 1) { $0?.count }
            }
            _ = try? table.forEachCluster { view in
                var ints: [Int64] = []
                view.ints(0, into: &ints)
                for i in 0..<view.count { _ = try? view.withBytes(1, i) { $0?.count } }
                return true
            }
            restore()
        }
        let keysOffset = ClusterLayout.keysOffset(columns: 3)
        expectCorrupt("a bad type") { $0.storeBytes(of: 3, toByteOffset: PageHeader.typeOffset, as: UInt8.self) }
        expectCorrupt("a huge count") { $0.storeBytes(of: UInt16(4000), toByteOffset: PageHeader.countOffset, as: UInt16.self) }
        expectCorrupt("a heap start past the page") { $0.storeBytes(of: UInt16(5000), toByteOffset: ClusterLayout.heapStartOffset, as: UInt16.self) }
        expectCorrupt("a column outside the page") { $0.storeBytes(of: UInt16(4090), toByteOffset: ClusterLayout.directoryOffset + 4, as: UInt16.self) }
        expectCorrupt("a bad encoding") { $0.storeBytes(of: UInt8(0x23), toByteOffset: ClusterLayout.directoryOffset + 2, as: UInt8.self) }
        // The victim's keys are consecutive: stepped, width 1, the base and deltas of 0.
        XCTAssertEqual(original[ClusterLayout.keyEncodingOffset], ClusterLayout.steppedKeys)
        XCTAssertEqual(original[ClusterLayout.keyWidthOffset], 1)
        expectCorrupt("keys out of order") { $0.storeBytes(of: UInt64.max, toByteOffset: keysOffset, as: UInt64.self) }
        expectCorrupt("an unknown key encoding") { $0.storeBytes(of: UInt8(2), toByteOffset: ClusterLayout.keyEncodingOffset, as: UInt8.self) }
        expectCorrupt("a key width that is none") { $0.storeBytes(of: UInt8(3), toByteOffset: ClusterLayout.keyWidthOffset, as: UInt8.self) }
        expectCorrupt("key deltas that fall") { p in
            // Width 1 over the first column's bytes: whatever they hold, 8 bytes of deltas
            // that are not all equal put some key at or below the one before it.
            p.storeBytes(of: UInt8(1), toByteOffset: ClusterLayout.keyWidthOffset, as: UInt8.self)
            for i in 0..<8 { p.storeBytes(of: UInt8(i % 2 == 0 ? 9 : 0), toByteOffset: keysOffset + 8 + i, as: UInt8.self) }
        }
        expectCorrupt("plain keys running into the columns") { $0.storeBytes(of: UInt8(0), toByteOffset: ClusterLayout.keyEncodingOffset, as: UInt8.self) }
        expectCorrupt("a string past the heap") { p in
            let col = Int(p.load(fromByteOffset: ClusterLayout.directoryOffset + 4, as: UInt16.self))
            p.storeBytes(of: UInt16(4090), toByteOffset: col, as: UInt16.self)
            p.storeBytes(of: UInt16(200), toByteOffset: col + 2, as: UInt16.self)
        }
        expectCorrupt("a bad overflow reference") { p in
            let col = Int(p.load(fromByteOffset: ClusterLayout.directoryOffset + 4, as: UInt16.self))
            p.storeBytes(of: UInt16(100), toByteOffset: col, as: UInt16.self)
            p.storeBytes(of: UInt16(0xFFFF), toByteOffset: col + 2, as: UInt16.self)
        }
        // A flipped bit fails the checksum.
        store.damage(victim, atByte: 100)
        XCTAssertThrowsError(try table.verify())
    }

    /// Objects edited in a batch before it is written (`ClusterBatch.position`, `cell`, `set`):
    /// the batch holds and writes what a batch of the final rows holds and writes, large values
    /// growing and shrinking past a quarter of a page included, and a refused value changes
    /// nothing.
    func testBatchEditsMatchBatchesOfTheFinalRows() throws {
        var rng = SeededRandom(seed: 9_091)
        let store = MemoryPageStore()
        var edited = ClusterTree(store: store, root: .empty, columns: Self.schema)
        var whole = ClusterTree(store: store, root: .empty, columns: Self.schema)
        var model = Model()
        var next: UInt64 = 1
        for round in 0..<20 {
            var batch = ClusterBatch(specs: Self.schema)
            var rows: [(key: UInt64, values: [CellValue])] = []
            for _ in 0..<(1 + rng.below(300)) {
                let row = Self.randomRow(Self.schema, &rng)
                try batch.append(next, row)
                rows.append((next, row))
                next += UInt64(1 + rng.below(3))
            }
            XCTAssertNil(batch.position(of: 0))
            XCTAssertNil(batch.position(of: next))
            if rows.count > 1, rows[1].key > rows[0].key + 1 { XCTAssertNil(batch.position(of: rows[0].key + 1)) }
            for _ in 0..<(rng.below(600)) {
                // The last object most often, as a create-then-set edits it.
                let i = rng.below(3) == 0 ? rows.count - 1 : rng.below(rows.count)
                let j = rng.below(Self.schema.count)
                XCTAssertEqual(batch.position(of: rows[i].key), i, "round \(round)")
                var value = Self.randomValue(Self.schema[j], &rng)
                if Self.schema[j].kind.isBytes && rng.below(4) == 0 { value = .bytes(rng.bytes(rng.below(3000))) }
                try batch.set(at: i, column: j, value)
                rows[i].values[j] = value
                XCTAssertEqual(batch.cell(at: i, column: j), value, "round \(round)")
            }
            // A value of the wrong kind: refused, naming the column, the batch unchanged.
            let d = Self.schema.firstIndex { $0.kind == .double }!
            XCTAssertThrowsError(try batch.set(at: 0, column: d, .bool(true))) { XCTAssertTrue("\($0)".contains("column \(d)"), "\($0)") }
            XCTAssertThrowsError(try batch.set(at: 0, column: Self.schema.count, .null))
            XCTAssertEqual(batch.cell(at: 0, column: d), rows[0].values[d])
            var fresh = ClusterBatch(specs: Self.schema)
            for (key, values) in rows { try fresh.append(key, values) }
            XCTAssertEqual(batch.wide, fresh.wide, "objects over a quarter of a page (round \(round))")
            try edited.append(&batch)
            try whole.append(&fresh)
            for (key, values) in rows { model.rows[key] = values }
            try edited.verify()
            if round % 5 == 4 { store.commit() }
        }
        try assertMatches(edited, model, "edited batches")
        try assertMatches(whole, model, "whole batches")
    }
}

/// Rough speed, printed rather than asserted (run with `-c release` to get meaningful numbers).
final class ClusterTreeSpeedTests: XCTestCase {
    func testSpeedOfAppendsReadsAndScans() throws {
        let store = MemoryPageStore()
        var table = ClusterTree(store: store, root: .empty,
                                columns: [ColumnSpec(.int), ColumnSpec(.double), ColumnSpec(.string), ColumnSpec(.bool, nullable: true)])
        let n: UInt64 = 20_000
        let clock = ContinuousClock()
        let name: [UInt8] = Array("object name".utf8)
        let insert = try clock.measure {
            for k in 0..<n {
                try table.insert(k, [.int(Int64(k % 1000)), .double(Double(k)), .bytes(name), k % 3 == 0 ? .null : .bool(true)])
                if k % 1000 == 999 { store.commit() }
            }
        }
        store.commit()
        var sum: Int64 = 0
        let get = try clock.measure {
            for k in 0..<n { if case .int(let x) = try table.get(k, column: 0) { sum &+= x } }
        }
        var ints: [Int64] = []
        let scan = try clock.measure {
            for _ in 0..<20 {
                try table.forEachCluster { (view: ClusterView) throws(StorageError) -> Bool in
                    view.ints(0, into: &ints)
                    for x in ints { sum &+= x }
                    return true
                }
            }
        }
        try table.verify()
        print("ClusterTree speed: \(n) appends \(insert), \(n) gets \(get), 20 scans of one int column \(scan) (\(table.root.clusters.count) clusters, checksum \(sum))")
    }
}
